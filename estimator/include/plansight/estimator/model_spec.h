// ModelSpec: the structure of a GPT/Llama-style decoder-only transformer, precise enough that
// the parameter count is exact (GQA, gated MLP, biases, norms, tied/untied embeddings).
#pragma once

#include <cstdint>
#include <string>

#include "plansight/estimator/enums.h"
#include "plansight/estimator/moe_spec.h"

namespace plansight::estimator {

struct ModelSpec {
  std::string name;
  std::string source;  // where the numbers come from (paper table, config.json)

  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    // == heads for multi-head attention; fewer for GQA/MQA
  std::int64_t head_dim = 0;    // 0: hidden / heads
  std::int64_t ffn_hidden = 0;  // intermediate size of the MLP
  std::int64_t vocab = 0;       // the tokenizer's vocabulary, unpadded
  std::int64_t max_seq_len = 0; // positions the model supports (learned table size)

  bool gated_mlp = false;        // SwiGLU/GeGLU: three matrices instead of two
  bool tied_embeddings = true;   // LM head shares the input embedding matrix
  NormKind norm = NormKind::layer_norm;
  bool norm_bias = true;         // LayerNorm with a bias (ignored for RMSNorm)
  std::int64_t norms_per_layer = 2;  // 1 for Falcon-7B's shared norm of parallel attention
  PositionKind position = PositionKind::learned;
  bool qkv_bias = true;          // bias on the query/key/value projections
  bool attention_out_bias = true;
  bool mlp_bias = true;
  bool dropout = true;           // dropout after attention softmax and on residual branches
  bool qk_norm = false;          // Qwen3: RMSNorm over head_dim on queries and keys
  bool attention_sinks = false;  // gpt-oss: one learned sink logit per head

  MoeSpec moe;                   // experts == 0: every layer is dense
  MlaSpec mla;                   // kv_lora_rank == 0: standard (GQA) attention
  // Multi-token prediction modules (DeepSeek-V3 Sec. 2.2): each adds two norms, a 2h -> h
  // projection, one transformer layer and a final norm, sharing the embedding and LM head.
  std::int64_t mtp_modules = 0;

  std::int64_t effective_head_dim() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
  std::int64_t q_width() const { return heads * effective_head_dim(); }
  std::int64_t kv_width() const { return kv_heads * effective_head_dim(); }
  // Whether layer i (from 0; i >= layers are MTP layers) has routed experts (MoeSpec's rule).
  bool is_moe_layer(std::int64_t i) const {
    if (!moe.enabled() || i < moe.first_dense_layers || moe.layer_interval < 1) return false;
    return (i - moe.first_dense_layers + 1) % moe.layer_interval == 0;
  }
  // MoE layers among layers [first, first + count).
  std::int64_t moe_layers_in(std::int64_t first, std::int64_t count) const {
    std::int64_t n = 0;
    for (std::int64_t i = first; i < first + count; ++i) n += is_moe_layer(i) ? 1 : 0;
    return n;
  }
};

}  // namespace plansight::estimator
