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
  LayerParameters layer;       // one transformer layer
  double word_embedding = 0;   // vocab * hidden
  double position_embedding = 0;
  double final_norm = 0;
  double lm_head = 0;          // 0 when tied
  double total = 0;
};

LayerParameters layer_parameters(const ModelSpec& model);

// Counts with the given vocabulary size (pass padded_vocab() for the count as trained).
ParameterCounts count_parameters(const ModelSpec& model, std::int64_t vocab);
inline ParameterCounts count_parameters(const ModelSpec& model) { return count_parameters(model, model.vocab); }

// Megatron-LM pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) * TP
// (megatron/training/tokenizer: _vocab_size_with_padding).
std::int64_t padded_vocab(std::int64_t vocab, std::int64_t tp, std::int64_t divisible_by = 128);

}  // namespace plansight::estimator
