// Matrix-multiply FLOPs of a training iteration (2 FLOPs per multiply-add; element-wise work is
// not counted, as in Narayanan et al. 2021 Sec. 5.1 and Korthikanti et al. 2022 Sec. 6).
// Forward per token and layer: QKV 2h(q+2k), output 2qh, MLP 2hf(2 or 3), scores QK^T 2sq and
// attention-times-V 2sq (halved when causal_attention). Backward costs twice the forward.
// GPT-style check: 3 * (24h^2 + 4sh) per token per layer + 3 * 2hV for the logits gives
// Korthikanti eq. (7), 72BLsh^2(1 + s/6h + V/12hL); full recomputation repeats every layer's
// forward once more, giving Narayanan eq. (3), 96Bslh^2(1 + s/6h + V/16lh).
// Selective recomputation repeats only the attention core (QK^T, softmax, AV) forward, i.e.
// + 1/3 of the attention FLOPs; Korthikanti eq. (8) writes s/3h here, which counts that
// recomputation as 3x rather than 1x the forward; we count the operations that actually run.
#include "plansight/estimator/flops.h"

#include "plansight/estimator/parameters.h"

namespace plansight::estimator {

namespace {

// MoE / MLA / MTP models (DeepSeek-V2 Sec. 2.1.2 for MLA's projections): per token, 2 FLOPs per
// weight of every GEMM the token passes through, so MoE layers count the router, the shared
// experts and top_k routed experts (the active parameters); MLA's scores are QK^T over
// nope + rope dims and AV over v_head_dim.
ForwardFlopsPerToken forward_flops_by_kind(const ModelSpec& m, std::int64_t seq_len, std::int64_t vocab,
                                           bool causal_attention) {
  const double h = static_cast<double>(m.hidden);
  const double s = static_cast<double>(seq_len);
  const double causal = causal_attention ? 0.5 : 1.0;
  const double gate = m.gated_mlp ? 3.0 : 2.0;
  ForwardFlopsPerToken out;
  double attention_gemms = 0;
  if (m.mla.enabled()) {
    const MlaSpec& a = m.mla;
    const double heads = static_cast<double>(m.heads);
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    const double qk = static_cast<double>(a.qk_head_dim()), v = static_cast<double>(a.v_head_dim);
    const double q = a.q_lora_rank > 0 ? h * ql + ql * heads * qk : h * heads * qk;
    attention_gemms = 2 * (q + h * (kvl + static_cast<double>(a.qk_rope_head_dim)) +
                           kvl * heads * (static_cast<double>(a.qk_nope_head_dim) + v) + heads * v * h);
    out.layer_attention = 2 * s * heads * (qk + v) * causal;
  } else {
    const double q = static_cast<double>(m.q_width());
    const double k = static_cast<double>(m.kv_width());
    attention_gemms = 2 * h * (q + 2 * k) + 2 * q * h;
    out.layer_attention = 4 * s * q * causal;
  }
  out.layer_dense = attention_gemms + 2 * h * static_cast<double>(m.ffn_hidden) * gate;
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    out.moe_layer_dense = attention_gemms + 2 * h * static_cast<double>(e.experts) +
                          2 * h * static_cast<double>(e.shared_experts * e.effective_shared_ffn_hidden()) * gate +
                          2 * h * static_cast<double>(e.top_k * e.expert_ffn_hidden) * gate;
  }
  out.lm_head = 2 * h * static_cast<double>(vocab);
  out.mtp_projection = 2 * 2 * h * h;
  return out;
}

// Forward FLOPs per token of the whole model without the LM head: dense layers, MoE layers,
// and each MTP module's layer, projection and second head.
double forward_layers_by_kind(const ModelSpec& m, const ForwardFlopsPerToken& f, bool with_attention) {
  const double moe_layers = static_cast<double>(m.moe_layers_in(0, m.layers));
  const double dense_layers = static_cast<double>(m.layers) - moe_layers;
  const double attention = with_attention ? f.layer_attention : 0.0;
  double total = dense_layers * (f.layer_dense + attention) + moe_layers * (f.moe_layer_dense + attention);
  for (std::int64_t k = 0; k < m.mtp_modules; ++k) {
    total += (m.is_moe_layer(m.layers + k) ? f.moe_layer_dense : f.layer_dense) + attention + f.mtp_projection + f.lm_head;
  }
  return total;
}

}  // namespace

ForwardFlopsPerToken forward_flops_per_token(const ModelSpec& m, std::int64_t seq_len, std::int64_t vocab,
                                             bool causal_attention) {
  if (m.moe.enabled() || m.mla.enabled() || m.mtp_modules > 0) {
    return forward_flops_by_kind(m, seq_len, vocab, causal_attention);
  }
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.q_width());
  const double k = static_cast<double>(m.kv_width());
  const double f = static_cast<double>(m.ffn_hidden);
  const double s = static_cast<double>(seq_len);
  ForwardFlopsPerToken out;
  out.layer_dense = 2 * h * (q + 2 * k) + 2 * q * h + 2 * h * f * (m.gated_mlp ? 3 : 2);
  out.layer_attention = 4 * s * q * (causal_attention ? 0.5 : 1.0);
  out.lm_head = 2 * h * static_cast<double>(vocab);
  return out;
}

FlopsEstimate iteration_flops(const ModelSpec& m, std::int64_t seq_len, double tokens, std::int64_t hardware_vocab,
                              Recompute recompute, bool causal_attention) {
  const double layers = static_cast<double>(m.layers);
  const auto model = forward_flops_per_token(m, seq_len, m.vocab, causal_attention);
  const auto hardware = forward_flops_per_token(m, seq_len, hardware_vocab, causal_attention);

  if (m.moe.enabled() || m.mla.enabled() || m.mtp_modules > 0) {
    FlopsEstimate out;
    out.model_per_iteration = 3 * tokens * (forward_layers_by_kind(m, model, true) + model.lm_head);
    const double hardware_forward = forward_layers_by_kind(m, hardware, true) + hardware.lm_head;
    double recomputed = 0;
    const double all_layers = layers + static_cast<double>(m.mtp_modules);
    switch (recompute) {
      case Recompute::none: break;
      case Recompute::selective: recomputed = all_layers * hardware.layer_attention; break;
      case Recompute::full: recomputed = forward_layers_by_kind(m, hardware, true) - hardware.lm_head * static_cast<double>(m.mtp_modules); break;
    }
    out.hardware_per_iteration = tokens * (3 * hardware_forward + recomputed);
    return out;
  }

  FlopsEstimate out;
  out.model_per_iteration = 3 * tokens * (layers * (model.layer_dense + model.layer_attention) + model.lm_head);
  double recomputed_forward = 0;  // per token
  switch (recompute) {
    case Recompute::none: break;
    case Recompute::selective: recomputed_forward = layers * hardware.layer_attention; break;
    case Recompute::full: recomputed_forward = layers * (hardware.layer_dense + hardware.layer_attention); break;
  }
  out.hardware_per_iteration =
      tokens * (3 * (layers * (hardware.layer_dense + hardware.layer_attention) + hardware.lm_head) + recomputed_forward);
  return out;
}

FlopsEstimate iteration_flops(const Plan& plan, std::int64_t hardware_vocab) {
  const double tokens = static_cast<double>(plan.training.global_batch) * static_cast<double>(plan.training.seq_len);
  return iteration_flops(plan.model, plan.training.seq_len, tokens, hardware_vocab, plan.layout.recompute,
                         plan.training.causal_attention_flops);
}

}  // namespace plansight::estimator
