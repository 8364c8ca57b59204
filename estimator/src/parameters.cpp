// Exact parameter counts. Per layer (with q = heads*head_dim, k = kv_heads*head_dim, f = ffn):
//   attention  h*(q + 2k) + q*h       (+ q + 2k QKV bias, + h output bias)
//   MLP        h*f*(2 or 3) (gated)   (+ f or 2f column bias, + h row bias)
//   norms      norms_per_layer * h    (+ the same again for LayerNorm biases)
// For GPT-style models (q = k = h, f = 4h, all biases, LayerNorm) this is 12h^2 + 13h,
// Narayanan et al. 2021 eq. (2). Column-parallel weights and biases are split over TP ranks;
// row-parallel output biases and norms are replicated (Shoeybi et al. 2019, Sec. 3).
// MoE layers replace the MLP by a router (hidden x experts), shared experts (dense MLPs, split
// over TP as Megatron-Core's SharedExpertMLP is) and routed experts (counted apart: they are
// split over EP x ETP). MLA and MTP are in attention_parameters and count_parameters below.
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

// One MLP of width f: up (and gate) projections and the down projection, with biases.
LayerParameters mlp_parameters(const ModelSpec& m, double f) {
  const double h = static_cast<double>(m.hidden);
  const double in_width = m.gated_mlp ? 2 * f : f;  // gate and up projections share the input
  LayerParameters p;
  p.sharded = h * in_width + f * h;
  if (m.mlp_bias) {
    p.sharded += in_width;
    p.replicated += h;
  }
  return p;
}

double norms(const ModelSpec& m) {
  const bool norm_has_bias = m.norm == NormKind::layer_norm && m.norm_bias;
  return static_cast<double>(m.norms_per_layer) * static_cast<double>(m.hidden) * (norm_has_bias ? 2 : 1);
}

// Multi-head latent attention as DeepSeek-V3's modeling code builds it (q_a_proj, q_a_layernorm,
// q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj; no biases). The down
// projections and their norms are replicated over TP ranks (Megatron-Core MLA builds them
// "duplicated"); the up projections and o_proj are split.
LayerParameters mla_parameters(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  const double heads = static_cast<double>(m.heads);
  const MlaSpec& a = m.mla;
  const double qk = static_cast<double>(a.qk_head_dim());
  const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
  LayerParameters p;
  if (a.q_lora_rank > 0) {
    p.replicated += h * ql + ql;   // q_a_proj, q_a_layernorm
    p.sharded += ql * heads * qk;  // q_b_proj
  } else {
    p.sharded += h * heads * qk;  // q_proj
  }
  p.replicated += h * (kvl + static_cast<double>(a.qk_rope_head_dim)) + kvl;  // kv_a_proj_with_mqa, kv_a_layernorm
  p.sharded += kvl * heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim);  // kv_b_proj
  p.sharded += heads * static_cast<double>(a.v_head_dim) * h;                          // o_proj
  return p;
}

}  // namespace

LayerParameters attention_parameters(const ModelSpec& m) {
  if (m.mla.enabled()) return mla_parameters(m);
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.q_width());
  const double k = static_cast<double>(m.kv_width());
  LayerParameters p;
  p.sharded = h * (q + 2 * k) + q * h;
  if (m.qkv_bias) p.sharded += q + 2 * k;
  if (m.attention_out_bias) p.replicated += h;
  if (m.qk_norm) p.replicated += 2 * static_cast<double>(m.effective_head_dim());  // q_norm, k_norm (Qwen3Attention)
  if (m.attention_sinks) p.sharded += static_cast<double>(m.heads);               // GptOssAttention.sinks
  return p;
}

LayerParameters layer_parameters(const ModelSpec& m) {
  const double f = static_cast<double>(m.ffn_hidden);
  if (!m.mla.enabled() && !m.qk_norm && !m.attention_sinks) {
    // The dense formula, summed in the order it always was, so dense counts stay bit-identical.
    const double h = static_cast<double>(m.hidden);
    const double q = static_cast<double>(m.q_width());
    const double k = static_cast<double>(m.kv_width());
    const double mlp_in_width = m.gated_mlp ? 2 * f : f;
    LayerParameters p;
    p.sharded = h * (q + 2 * k) + q * h + h * mlp_in_width + f * h;
    if (m.qkv_bias) p.sharded += q + 2 * k;
    if (m.mlp_bias) p.sharded += mlp_in_width;
    if (m.attention_out_bias) p.replicated += h;
    if (m.mlp_bias) p.replicated += h;
    p.replicated += norms(m);
    return p;
  }
  const LayerParameters a = attention_parameters(m);
  const LayerParameters mlp = mlp_parameters(m, f);
  return {a.sharded + mlp.sharded, a.replicated + mlp.replicated + norms(m)};
}

LayerParameters moe_layer_parameters(const ModelSpec& m) {
  const MoeSpec& moe = m.moe;
  const double h = static_cast<double>(m.hidden);
  const double experts = static_cast<double>(moe.experts);
  LayerParameters p = attention_parameters(m);
  p.replicated += norms(m);
  // Router: Linear(hidden, experts), replicated on TP ranks (Megatron-Core TopKRouter).
  p.replicated += h * experts + (moe.router_bias ? experts : 0) + (moe.router_score_bias ? experts : 0);
  if (moe.shared_experts > 0) {
    const LayerParameters shared = mlp_parameters(m, static_cast<double>(moe.effective_shared_ffn_hidden()));
    p.sharded += static_cast<double>(moe.shared_experts) * shared.sharded;
    p.replicated += static_cast<double>(moe.shared_experts) * shared.replicated;
    if (moe.shared_expert_gate) p.replicated += h;
  }
  return p;
}

double routed_expert_parameters(const ModelSpec& m) {
  return mlp_parameters(m, static_cast<double>(m.moe.expert_ffn_hidden)).total();
}

ParameterCounts count_parameters(const ModelSpec& m, std::int64_t vocab) {
  const double h = static_cast<double>(m.hidden);
  ParameterCounts c;
  c.layer = layer_parameters(m);
  c.word_embedding = static_cast<double>(vocab) * h;
  c.position_embedding = m.position == PositionKind::learned ? static_cast<double>(m.max_seq_len) * h : 0;
  const bool norm_has_bias = m.norm == NormKind::layer_norm && m.norm_bias;
  c.final_norm = h * (norm_has_bias ? 2 : 1);
  c.lm_head = m.tied_embeddings ? 0 : static_cast<double>(vocab) * h;
  if (!m.moe.enabled() && m.mtp_modules == 0) {
    c.dense_layers = m.layers;
    c.total = static_cast<double>(m.layers) * c.layer.total() + c.word_embedding + c.position_embedding +
              c.final_norm + c.lm_head;
    c.active = c.total;
    return c;
  }
  c.moe_layers = m.moe_layers_in(0, m.layers);
  c.dense_layers = m.layers - c.moe_layers;
  if (m.moe.enabled()) {
    c.moe_layer = moe_layer_parameters(m);
    c.routed_expert = routed_expert_parameters(m);
    c.routed_experts = static_cast<double>(m.moe.experts) * c.routed_expert;
  }
  const double shared = c.word_embedding + c.position_embedding + c.final_norm + c.lm_head;
  const double dense = static_cast<double>(c.dense_layers) * c.layer.total();
  const double moe = static_cast<double>(c.moe_layers) * c.moe_layer.total();
  const double experts = static_cast<double>(c.moe_layers) * c.routed_experts;
  const double active_experts = static_cast<double>(c.moe_layers * m.moe.top_k) * c.routed_expert;
  // MTP module k (DeepSeek-V3 Sec. 2.2, Fig. 3): RMSNorms on the hidden state and the
  // embedding (2h), M_k in R^{h x 2h}, one transformer layer, and a final norm before the
  // shared head (shared_head.norm in the released checkpoint).
  c.mtp_extra.sharded = 2 * h * h;
  c.mtp_extra.replicated = 2 * h + c.final_norm;
  for (std::int64_t k = 0; k < m.mtp_modules; ++k) {
    const bool moe_layer = m.is_moe_layer(m.layers + k);
    c.mtp += c.mtp_extra.total() + (moe_layer ? c.moe_layer.total() + c.routed_experts : c.layer.total());
    c.mtp_active += c.mtp_extra.total() +
                    (moe_layer ? c.moe_layer.total() + static_cast<double>(m.moe.top_k) * c.routed_expert : c.layer.total());
  }
  c.total = dense + moe + experts + shared + c.mtp;
  c.active = dense + moe + active_experts + shared;
  return c;
}

std::int64_t padded_vocab(std::int64_t vocab, std::int64_t tp, std::int64_t divisible_by) {
  const std::int64_t multiple = divisible_by * (tp > 0 ? tp : 1);
  if (multiple <= 0) return vocab;
  return (vocab + multiple - 1) / multiple * multiple;
}

}  // namespace plansight::estimator
