// Exact parameter counts. Per layer (with q = heads*head_dim, k = kv_heads*head_dim, f = ffn):
//   attention  h*(q + 2k) + q*h       (+ q + 2k QKV bias, + h output bias)
//   MLP        h*f*(2 or 3) (gated)   (+ f or 2f column bias, + h row bias)
//   norms      norms_per_layer * h    (+ the same again for LayerNorm biases)
// For GPT-style models (q = k = h, f = 4h, all biases, LayerNorm) this is 12h^2 + 13h,
// Narayanan et al. 2021 eq. (2). Column-parallel weights and biases are split over TP ranks;
// row-parallel output biases and norms are replicated (Shoeybi et al. 2019, Sec. 3).
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {

LayerParameters layer_parameters(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.q_width());
  const double k = static_cast<double>(m.kv_width());
  const double f = static_cast<double>(m.ffn_hidden);
  const double mlp_in_width = m.gated_mlp ? 2 * f : f;  // gate and up projections share the input

  LayerParameters p;
  p.sharded = h * (q + 2 * k) + q * h + h * mlp_in_width + f * h;
  if (m.qkv_bias) p.sharded += q + 2 * k;
  if (m.mlp_bias) p.sharded += mlp_in_width;
  if (m.attention_out_bias) p.replicated += h;
  if (m.mlp_bias) p.replicated += h;
  const bool norm_has_bias = m.norm == NormKind::layer_norm && m.norm_bias;
  p.replicated += static_cast<double>(m.norms_per_layer) * h * (norm_has_bias ? 2 : 1);
  return p;
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
  c.total = static_cast<double>(m.layers) * c.layer.total() + c.word_embedding + c.position_embedding +
            c.final_norm + c.lm_head;
  return c;
}

std::int64_t padded_vocab(std::int64_t vocab, std::int64_t tp, std::int64_t divisible_by) {
  const std::int64_t multiple = divisible_by * (tp > 0 ? tp : 1);
  if (multiple <= 0) return vocab;
  return (vocab + multiple - 1) / multiple * multiple;
}

}  // namespace plansight::estimator
