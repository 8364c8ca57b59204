// MoE models written out field by field from their published Hugging Face config.json files,
// for tests that must not depend on the importer or the presets:
//  DeepSeek-V3: huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json
//  Mixtral 8x7B: huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json
#pragma once

#include "plansight/estimator/model_spec.h"

namespace plansight::testing {

inline estimator::ModelSpec llama_style(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                        std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocab) {
  estimator::ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.vocab = vocab;
  m.max_seq_len = 4096;
  m.gated_mlp = true;
  m.tied_embeddings = false;
  m.norm = estimator::NormKind::rms_norm;
  m.norm_bias = false;
  m.position = estimator::PositionKind::rope;
  m.qkv_bias = m.attention_out_bias = m.mlp_bias = false;
  m.dropout = false;
  return m;
}

// 61 layers (3 dense, 58 MoE), MLA, 256 routed experts of width 2048, top-8, 1 shared expert,
// 1 MTP module, e_score_correction_bias; vocab 129280, untied.
inline estimator::ModelSpec deepseek_v3() {
  estimator::ModelSpec m = llama_style(61, 7168, 128, 128, 18432, 129280);
  m.name = "deepseek-v3";
  m.max_seq_len = 163840;
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.shared_experts = 1;
  m.moe.first_dense_layers = 3;
  m.moe.router_score_bias = true;
  m.mla = {.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128};
  m.mtp_modules = 1;
  return m;
}

// 32 layers, all MoE: 8 experts of width 14336, top-2, GQA 32/8, vocab 32000, untied.
inline estimator::ModelSpec mixtral_8x7b() {
  estimator::ModelSpec m = llama_style(32, 4096, 32, 8, 14336, 32000);
  m.name = "mixtral-8x7b";
  m.max_seq_len = 32768;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 14336;
  return m;
}

}  // namespace plansight::testing
