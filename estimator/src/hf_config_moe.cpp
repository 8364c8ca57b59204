// MoE families of the Hugging Face importer (see hf_config_moe.h). Shared conventions: RMSNorm
// without bias, RoPE, SwiGLU experts, untied embeddings unless the config says otherwise; the
// structural sizes are required, as for dense families, because a silent default would describe
// a different model.
#include "hf_config_moe.h"

#include <string>

#include "hf_config_keys.h"

namespace plansight::estimator::hf {
namespace {

// What every family here shares (modeling_mixtral / qwen*_moe / deepseek / gpt_oss / llama4).
void llama_like(ModelSpec& m) {
  m.gated_mlp = true;
  m.norm = NormKind::rms_norm;
  m.norm_bias = false;
  m.norms_per_layer = 2;
  m.position = PositionKind::rope;
  m.mlp_bias = false;
}

void read_core(JsonReader& r, ModelSpec& m) {
  read_required(r, "hidden_size", m.hidden);
  read_required(r, "num_hidden_layers", m.layers);
  read_required(r, "num_attention_heads", m.heads);
  read_required(r, "vocab_size", m.vocab);
}

// Qwen's mlp_only_layers list: dense layers by index. The layer rule (first_dense_layers,
// layer_interval) expresses an empty list or a prefix 0..k-1 with decoder_sparse_step 1.
void read_mlp_only_layers(JsonReader& r, const nlohmann::json& config, ModelSpec& m) {
  const auto it = config.find("mlp_only_layers");
  if (it == config.end() || it->is_null()) return;
  if (!it->is_array()) {
    r.error("mlp_only_layers", "expected an array of layer indices, got " + describe_json(*it));
    return;
  }
  std::int64_t expected = 0;
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<std::int64_t>() != expected) {
      r.error("mlp_only_layers", "value " + describe_json(*it) +
                                     " is not supported; valid: [] or the first layers [0, 1, ..., k-1] (with "
                                     "decoder_sparse_step 1)");
      return;
    }
    ++expected;
  }
  if (expected > 0 && m.moe.layer_interval != 1) {
    r.error("mlp_only_layers", "a non-empty list with decoder_sparse_step " + std::to_string(m.moe.layer_interval) +
                                   " is not supported; valid: [] or decoder_sparse_step 1");
    return;
  }
  m.moe.first_dense_layers = expected;
}

}  // namespace

// MixtralConfig defaults: num_key_value_heads 8, max_position_embeddings 4096*32,
// num_local_experts 8, num_experts_per_tok 2, tie_word_embeddings False. Every layer is a
// MixtralSparseMoeBlock: gate Linear(h, E, bias=False), experts w1/w3 (h x f) and w2 (f x h).
void read_mixtral(JsonReader& r, ModelSpec& m) {
  read_core(r, m);
  read_required(r, "intermediate_size", m.ffn_hidden);
  m.kv_heads = 8;
  read_optional(r, "num_key_value_heads", m.kv_heads);
  read_optional(r, "head_dim", m.head_dim);
  m.max_seq_len = 4096 * 32;
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", false);
  llama_like(m);
  m.qkv_bias = m.attention_out_bias = false;
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}});
  m.moe.experts = 8;
  read_optional(r, "num_local_experts", m.moe.experts);
  m.moe.top_k = 2;
  read_optional(r, "num_experts_per_tok", m.moe.top_k);
  m.moe.expert_ffn_hidden = m.ffn_hidden;
  check_shape(r, m, {"hidden_size", "num_attention_heads", "num_key_value_heads", true});
}

// Qwen2MoeConfig / Qwen3MoeConfig. Qwen2-MoE (modeling_qwen2_moe): bias on q/k/v_proj
// (config qkv_bias, default True), a shared expert of shared_expert_intermediate_size with a
// sigmoid gate Linear(h, 1). Qwen3-MoE (modeling_qwen3_moe): attention_bias (default False) on
// q/k/v/o, RMSNorm q_norm/k_norm over head_dim, no shared expert. Both: layer i is sparse when
// not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0; dense layers use
// intermediate_size. num_key_value_heads default: Qwen2MoeConfig 16, Qwen3MoeConfig 4.
void read_qwen_moe(JsonReader& r, const nlohmann::json& config, bool qwen3, ModelSpec& m) {
  read_core(r, m);
  read_required(r, "num_experts", m.moe.experts);
  read_required(r, "num_experts_per_tok", m.moe.top_k);
  read_required(r, "moe_intermediate_size", m.moe.expert_ffn_hidden);
  m.ffn_hidden = qwen3 ? 6144 : 5632;  // intermediate_size defaults; used only by dense layers
  read_optional(r, "intermediate_size", m.ffn_hidden);
  m.kv_heads = qwen3 ? 4 : 16;
  read_optional(r, "num_key_value_heads", m.kv_heads);
  read_optional(r, "head_dim", m.head_dim);
  m.max_seq_len = 32768;  // both configs' max_position_embeddings default
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", false);
  llama_like(m);
  m.moe.layer_interval = 1;
  read_optional(r, "decoder_sparse_step", m.moe.layer_interval);
  read_mlp_only_layers(r, config, m);
  if (qwen3) {
    m.qkv_bias = m.attention_out_bias = read_flag(r, "attention_bias", false);
    m.qk_norm = true;
  } else {
    m.qkv_bias = read_flag(r, "qkv_bias", true);
    m.attention_out_bias = false;
    m.moe.shared_experts = 1;
    read_required(r, "shared_expert_intermediate_size", m.moe.shared_expert_ffn_hidden);
    m.moe.shared_expert_gate = true;
  }
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}});
  check_shape(r, m, {"hidden_size", "num_attention_heads", "num_key_value_heads", true});
}

// DeepseekV2Config / DeepseekV3Config (modeling_deepseek_v2/v3): MLA attention without biases
// (attention_bias default False), layer i sparse when i >= first_k_dense_replace and
// i % moe_layer_freq == 0, n_shared_experts shared experts of moe_intermediate_size, gate
// weight (E x h); V3's gate adds e_score_correction_bias (E). num_nextn_predict_layers (V3's
// MTP modules) is not a transformers key but is in DeepSeek's released config.json.
void read_deepseek(JsonReader& r, const nlohmann::json& config, bool v3, ModelSpec& m) {
  read_core(r, m);
  read_required(r, "intermediate_size", m.ffn_hidden);
  read_required(r, "n_routed_experts", m.moe.experts);
  read_required(r, "num_experts_per_tok", m.moe.top_k);
  read_required(r, "moe_intermediate_size", m.moe.expert_ffn_hidden);
  read_required(r, "kv_lora_rank", m.mla.kv_lora_rank);
  read_required(r, "qk_nope_head_dim", m.mla.qk_nope_head_dim);
  read_required(r, "qk_rope_head_dim", m.mla.qk_rope_head_dim);
  read_required(r, "v_head_dim", m.mla.v_head_dim);
  read_nullable(r, config, "q_lora_rank", 0, m.mla.q_lora_rank);
  read_nullable(r, config, "n_shared_experts", 0, m.moe.shared_experts);
  r.read("first_k_dense_replace", m.moe.first_dense_layers, 0, kMaxSize);
  std::int64_t freq = 1;
  r.read("moe_layer_freq", freq, 1, kMaxSize);
  if (freq != 1) {
    // DeepSeek's rule (i % freq == 0 after the dense prefix) differs from ours for freq > 1; no
    // released DeepSeek model uses it.
    r.error("moe_layer_freq", "value " + std::to_string(freq) + " is not supported; valid: 1");
  }
  r.read("num_nextn_predict_layers", m.mtp_modules, 0, 16);
  m.kv_heads = m.heads;  // every head has its own key and value, decompressed from the latent
  m.head_dim = m.mla.v_head_dim;
  m.max_seq_len = v3 ? 4096 : 2048;
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", false);
  llama_like(m);
  m.qkv_bias = m.attention_out_bias = read_flag(r, "attention_bias", false);
  m.moe.router_score_bias = v3;
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}});
}

// GptOssConfig (modeling_gpt_oss): attention with biases (attention_bias default True) and one
// learned sink per head, GQA (num_key_value_heads default 8, head_dim default 64), every layer
// MoE: router Linear(h, E) with bias, experts gate_up_proj (h x 2f) + bias, down_proj (f x h)
// + bias. Defaults: num_local_experts 128, num_experts_per_tok 4.
void read_gpt_oss(JsonReader& r, ModelSpec& m) {
  read_core(r, m);
  read_required(r, "intermediate_size", m.ffn_hidden);
  m.moe.experts = 128;
  read_optional(r, "num_local_experts", m.moe.experts);
  m.moe.top_k = 4;
  read_optional(r, "num_experts_per_tok", m.moe.top_k);
  m.moe.expert_ffn_hidden = m.ffn_hidden;
  m.moe.router_bias = true;
  m.kv_heads = 8;
  read_optional(r, "num_key_value_heads", m.kv_heads);
  m.head_dim = 64;
  read_optional(r, "head_dim", m.head_dim);
  m.max_seq_len = 131072;
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", false);
  llama_like(m);
  m.mlp_bias = true;  // the experts' projections carry biases
  m.qkv_bias = m.attention_out_bias = read_flag(r, "attention_bias", true);
  m.attention_sinks = true;
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}});
  check_shape(r, m, {"hidden_size", "num_attention_heads", "num_key_value_heads", true});
}

// Llama4TextConfig (modeling_llama4): MoE layers every interleave_moe_layer_step-th layer
// (moe_layers default: range(step - 1, layers, step)), each with a router Linear(h, E) without
// bias, E experts and one shared expert of intermediate_size; dense layers use
// intermediate_size_mlp. Attention without biases by default; its q/k norm is a parameter-free
// L2 norm. Defaults: num_key_value_heads 8, head_dim 128, num_local_experts 16, top-1.
void read_llama4_text(JsonReader& r, ModelSpec& m) {
  read_core(r, m);
  read_required(r, "intermediate_size", m.moe.expert_ffn_hidden);
  read_required(r, "intermediate_size_mlp", m.ffn_hidden);
  m.moe.experts = 16;
  read_optional(r, "num_local_experts", m.moe.experts);
  m.moe.top_k = 1;
  read_optional(r, "num_experts_per_tok", m.moe.top_k);
  m.moe.shared_experts = 1;
  read_optional(r, "interleave_moe_layer_step", m.moe.layer_interval);
  if (const auto* listed = r.get("moe_layers"); listed && !listed->is_null()) {
    bool matches = listed->is_array();
    std::int64_t expected = m.moe.layer_interval - 1, count = 0;
    for (const auto& v : matches ? *listed : nlohmann::json::array()) {
      matches = matches && v.is_number_integer() && v.get<std::int64_t>() == expected;
      expected += m.moe.layer_interval;
      ++count;
    }
    if (!matches || (m.layers > 0 && count != m.moe_layers_in(0, m.layers))) {
      r.error("moe_layers", "value " + describe_json(*listed) +
                                " is not supported; valid: every interleave_moe_layer_step-th layer, or absent");
    }
  }
  m.kv_heads = 8;
  read_optional(r, "num_key_value_heads", m.kv_heads);
  m.head_dim = 128;
  read_optional(r, "head_dim", m.head_dim);
  m.max_seq_len = 4096 * 32;
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", false);
  llama_like(m);
  m.qkv_bias = m.attention_out_bias = read_flag(r, "attention_bias", false);
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}});
  check_shape(r, m, {"hidden_size", "num_attention_heads", "num_key_value_heads", true});
}

}  // namespace plansight::estimator::hf
