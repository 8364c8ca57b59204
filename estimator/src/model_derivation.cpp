// derive_model(): derived model fields follow the fields they derive from (see
// model_derivation.h). The rules follow how the published model families are shaped:
// GPT-2/GPT-3 keep d_ff = 4 d_model at every size (Brown et al. 2020, Sec. 2.1), Llama keeps
// d_ff ~ 8/3 d_model (Touvron et al. 2023, Sec. 2.2), so the MLP keeps its base's ratio; Llama 3
// keeps 8 KV heads from 8B to 405B (Llama 3 Herd of Models, Table 3), so GQA keeps its KV count.
#include "plansight/estimator/model_derivation.h"

#include <cmath>

namespace plansight::estimator {
namespace {

bool changed(std::int64_t a, std::int64_t b) { return a != b; }

// The experts' structure: the capacity factor and the assumed imbalance describe how tokens are
// routed in training, not the model, so changing them keeps the model's name.
bool same_experts(MoeSpec a, MoeSpec b) {
  a.capacity_factor = b.capacity_factor = 0;
  a.load_imbalance = b.load_imbalance = 1;
  return a == b;
}

// base.ffn_hidden * hidden / base.hidden, nearest integer; the edited value when the scaled one
// cannot be formed (validate() then names the bad hidden size).
std::int64_t scaled_ffn(const ModelSpec& base, std::int64_t hidden, std::int64_t edited_ffn) {
  if (base.hidden <= 0 || base.ffn_hidden <= 0 || hidden <= 0) return edited_ffn;
  const long double v = static_cast<long double>(base.ffn_hidden) * static_cast<long double>(hidden) /
                        static_cast<long double>(base.hidden);
  if (!(v < 0x1p62L)) return edited_ffn;
  return static_cast<std::int64_t>(std::llround(v));
}

// "layers 30, hidden 3072": the structural fields that differ from the base.
std::string changes(const ModelSpec& base, const ModelSpec& m) {
  std::string out;
  auto add = [&](const char* name, std::int64_t a, std::int64_t b) {
    if (a != b) out += (out.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(b);
  };
  add("layers", base.layers, m.layers);
  add("hidden", base.hidden, m.hidden);
  add("heads", base.heads, m.heads);
  add("kv_heads", base.kv_heads, m.kv_heads);
  add("head_dim", base.effective_head_dim(), m.effective_head_dim());
  add("ffn_hidden", base.ffn_hidden, m.ffn_hidden);
  add("vocab", base.vocab, m.vocab);
  add("max_seq_len", base.max_seq_len, m.max_seq_len);
  add("experts", base.moe.experts, m.moe.experts);
  add("top_k", base.moe.top_k, m.moe.top_k);
  add("expert_ffn_hidden", base.moe.expert_ffn_hidden, m.moe.expert_ffn_hidden);
  add("shared_experts", base.moe.shared_experts, m.moe.shared_experts);
  add("first_dense_layers", base.moe.first_dense_layers, m.moe.first_dense_layers);
  add("kv_lora_rank", base.mla.kv_lora_rank, m.mla.kv_lora_rank);
  add("mtp_modules", base.mtp_modules, m.mtp_modules);
  if (out.empty()) out = "other structure fields changed";
  return out;
}

}  // namespace

std::string custom_model_name(const std::string& base_name) {
  if (base_name.empty()) return "custom";
  if (base_name.rfind("custom", 0) == 0) return base_name;
  return "custom (based on " + base_name + ")";
}

bool same_structure(const ModelSpec& a, const ModelSpec& b) {
  return a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads && a.kv_heads == b.kv_heads &&
         a.effective_head_dim() == b.effective_head_dim() && a.ffn_hidden == b.ffn_hidden && a.vocab == b.vocab &&
         a.max_seq_len == b.max_seq_len && a.gated_mlp == b.gated_mlp && a.tied_embeddings == b.tied_embeddings &&
         a.norm == b.norm && a.norm_bias == b.norm_bias && a.norms_per_layer == b.norms_per_layer &&
         a.position == b.position && a.qkv_bias == b.qkv_bias && a.attention_out_bias == b.attention_out_bias &&
         a.mlp_bias == b.mlp_bias && a.dropout == b.dropout && a.qk_norm == b.qk_norm &&
         a.attention_sinks == b.attention_sinks && same_experts(a.moe, b.moe) && a.mla == b.mla && a.mtp_modules == b.mtp_modules;
}

ModelSpec derive_model(const ModelSpec& base, const ModelSpec& edited, const ExplicitModelFields& given) {
  ModelSpec m = edited;
  const bool hidden_changed = changed(base.hidden, m.hidden);
  const bool heads_changed = changed(base.heads, m.heads);
  if (!given.ffn_hidden && hidden_changed) m.ffn_hidden = scaled_ffn(base, m.hidden, m.ffn_hidden);
  if (!given.kv_heads && heads_changed && base.kv_heads == base.heads) m.kv_heads = m.heads;
  const bool base_head_dim_derived =
      base.head_dim == 0 || (base.heads > 0 && base.head_dim * base.heads == base.hidden);
  if (!given.head_dim && base_head_dim_derived && (hidden_changed || heads_changed)) m.head_dim = 0;

  if (!given.name && !same_structure(base, m) && !base.name.empty()) {
    m.name = custom_model_name(base.name);
    if (!given.source && m.name != base.name) m.source = base.name + " with " + changes(base, m);
  }
  return m;
}

}  // namespace plansight::estimator
