// Calibration of the two CPU kernels the time model cannot build from GEMMs and element-wise
// rates: the fused causal attention (scores, softmax and weighted sum in one set of loops, llm.c's
// attention_forward/backward) and the AdamW step (a square root and a division per parameter
// make it compute bound on a CPU, well below the copy bandwidth the model would otherwise use).
#include <algorithm>
#include <memory>

#include "plansight/estimator/time_model.h"
#include "plansight/kernels/adamw.h"
#include "plansight/kernels/attention.h"
#include "plansight/probe/calibration.h"
#include "calibration_util.h"

namespace plansight::probe {
namespace kc = plansight::kernels::cpu;

estimator::AttentionSample measure_attention(const ProbeRequest& r, CalibrationLevel level, int concurrency) {
  const std::int64_t tp = std::max<std::int64_t>(r.layout.tp, 1);
  const int B = static_cast<int>(r.micro_batch), T = static_cast<int>(r.seq_len);
  const int NH = static_cast<int>(r.model.heads / tp), C = static_cast<int>(r.model.hidden / tp);
  const double qkv = static_cast<double>(B) * T * 3 * C, att = static_cast<double>(B) * NH * T * T;
  const double out = static_cast<double>(B) * T * C;
  estimator::AttentionSample s;
  s.batch_heads = static_cast<std::int64_t>(B) * NH;
  s.seq = T;
  s.head_dim = C / std::max(NH, 1);
  s.forward_s = kernel_seconds(level, concurrency, [=](int) {
    auto in = activation_buffer(qkv), probs = activation_buffer(att), y = activation_buffer(out);
    return [=] { kc::attention_forward(y->data(), probs->data(), in->data(), B, T, C, NH); };
  });
  s.backward_s = kernel_seconds(level, concurrency, [=](int) {
    auto in = activation_buffer(qkv), probs = activation_buffer(att), y = activation_buffer(out), dy = activation_buffer(out),
         din = activation_buffer(qkv), scratch = activation_buffer(att);
    kc::attention_forward(y->data(), probs->data(), in->data(), B, T, C, NH);  // real probabilities
    return [=] { kc::attention_backward(din->data(), scratch->data(), dy->data(), in->data(), probs->data(), B, T, C, NH); };
  });
  return s;
}

double measure_optimizer(const ProbeRequest& r, CalibrationLevel level, int concurrency) {
  // The largest unit the run updates at once: one layer's parameters on one TP rank (GPT-2:
  // 12h^2 + 13h, Narayanan et al. 2021 eq. 2 with biases).
  const double h = static_cast<double>(r.model.hidden);
  const auto n = static_cast<std::size_t>((12 * h * h + 13 * h) / static_cast<double>(std::max<std::int64_t>(r.layout.tp, 1)));
  const double seconds = kernel_seconds(level, concurrency, [=](int) {
    auto params = activation_buffer(static_cast<double>(n)), grads = activation_buffer(static_cast<double>(n));
    auto m = std::make_shared<std::vector<float>>(n), v = std::make_shared<std::vector<float>>(n);
    auto step = std::make_shared<int>(0);
    return [=] { kc::adamw_update(params->data(), m->data(), v->data(), grads->data(), n, kernels::AdamWSettings{}, ++*step); };
  });
  // The bytes the time model charges: the probe's optimizer as plan_of_probe_run() describes it.
  estimator::TrainingSpec t;
  t.precision = estimator::Precision::fp32;
  t.grad_precision = estimator::Precision::fp32;
  t.master_precision = estimator::MasterPrecision::none;
  t.optimizer = estimator::Optimizer::adam;
  const double bytes = static_cast<double>(n) * estimator::optimizer_bytes_per_parameter(t);
  return seconds > 0 ? bytes / seconds : 0;
}

}  // namespace plansight::probe
