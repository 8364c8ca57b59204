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

ForwardFlopsPerToken forward_flops_per_token(const ModelSpec& m, std::int64_t seq_len, std::int64_t vocab,
                                             bool causal_attention) {
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
