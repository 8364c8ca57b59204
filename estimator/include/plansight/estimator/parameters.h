// Exact parameter counts of a ModelSpec, whole and per tensor-parallel rank, and Megatron's
// vocabulary padding.
#pragma once

#include <cstdint>

#include "plansight/estimator/model_spec.h"

namespace plansight::estimator {

struct LayerParameters {
  double sharded = 0;     // split over TP ranks: Q/K/V, attention out, MLP weights, column biases
  double replicated = 0;  // on every TP rank: norms, row-parallel output biases
  double total() const { return sharded + replicated; }
  double per_tp_rank(std::int64_t tp) const { return sharded / static_cast<double>(tp) + replicated; }
};

struct ParameterCounts {
  LayerParameters layer;       // one dense transformer layer (every layer of a dense model)
  // One MoE layer outside its routed experts (attention, norms, router, shared experts), split
  // over TP like a dense layer; its routed experts are split over EP x ETP instead.
  LayerParameters moe_layer;
  double routed_expert = 0;    // one routed expert
  double routed_experts = 0;   // all routed experts of one MoE layer
  std::int64_t dense_layers = 0;
  std::int64_t moe_layers = 0;
  // Per MTP module, beyond its transformer layer: the two input norms and the 2h -> h
  // projection (sharded), and its final norm (replicated).
  LayerParameters mtp_extra;
  double mtp = 0;              // all MTP modules with their layers (embedding and head shared)
  double mtp_active = 0;       // of which a token uses (top_k routed experts of an MoE MTP layer)
  double word_embedding = 0;   // vocab * hidden
  double position_embedding = 0;
  double final_norm = 0;
  double lm_head = 0;          // 0 when tied
  double total = 0;            // everything trained: the main model plus the MTP modules
  // Per token: every parameter of the main model except the routed experts a token skips
  // (top_k of `experts` per MoE layer); both embedding tables counted, as the Mixtral and
  // Qwen3 model cards count; MTP modules excluded, as DeepSeek-V3's 37B excludes them.
  double active = 0;
  double main_model() const { return total - mtp; }
  // Active without the input embedding table (a lookup, not a GEMM), as DeepSeek-V3's
  // README_WEIGHTS.md (36.6B) and the gpt-oss model card (5.1B) count.
  double active_without_input_embedding() const { return active - word_embedding - position_embedding; }
};

LayerParameters layer_parameters(const ModelSpec& model);
// The attention block alone (projections, q/k norms, sinks; MLA when the model has it).
LayerParameters attention_parameters(const ModelSpec& model);
// One MoE layer outside its routed experts, and one routed expert.
LayerParameters moe_layer_parameters(const ModelSpec& model);
double routed_expert_parameters(const ModelSpec& model);

// Counts with the given vocabulary size (pass padded_vocab() for the count as trained).
ParameterCounts count_parameters(const ModelSpec& model, std::int64_t vocab);
inline ParameterCounts count_parameters(const ModelSpec& model) { return count_parameters(model, model.vocab); }

// Megatron-LM pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) * TP
// (megatron/training/tokenizer: _vocab_size_with_padding).
std::int64_t padded_vocab(std::int64_t vocab, std::int64_t tp, std::int64_t divisible_by = 128);

}  // namespace plansight::estimator
