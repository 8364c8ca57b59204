// Element-wise calibration: times the CPU kernels behind the time model's element-wise costs
// (LayerNorm, residual add, GeLU, softmax, cross-entropy, embedding) at the run's shapes and
// records, per kind, the bytes estimator/src/layer_costs.cpp charges for that kernel over the
// measured seconds less the per-kernel overhead. The model (overhead + bytes / rate) then gives
// back the measured time at this shape. Why per kernel: on a CPU GeLU's tanhf makes it compute
// bound, several times slower than a copy of the same bytes.
#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include "plansight/estimator/parameters.h"
#include "plansight/kernels/encoder.h"
#include "plansight/kernels/gelu.h"
#include "plansight/kernels/layernorm.h"
#include "plansight/kernels/residual.h"
#include "plansight/kernels/softmax_crossentropy.h"
#include "plansight/probe/calibration.h"
#include "calibration_util.h"

namespace plansight::probe {
namespace {

namespace kc = plansight::kernels::cpu;
using Buffer = std::shared_ptr<std::vector<float>>;

Buffer buffer(double n) { return activation_buffer(n); }

}  // namespace

std::map<std::string, double> measure_elementwise(const ProbeRequest& r, CalibrationLevel level, int concurrency,
                                                  double kernel_overhead_s) {
  // Dims as layer_costs.cpp's dims_of() for the probe: fp32 (e = 4), cp = 1, no gated MLP.
  const double e = 4, t = static_cast<double>(std::max<std::int64_t>(r.layout.tp, 1));
  const double b = static_cast<double>(r.micro_batch), s = static_cast<double>(r.seq_len), T = b * s;
  const double h = static_cast<double>(r.model.hidden), f = static_cast<double>(r.model.ffn_hidden);
  const double mask = r.model.dropout ? 1 : 0, gate = r.model.gated_mlp ? 2 : 1;
  const bool sp = r.layout.sequence_parallel && r.layout.tp > 1;
  const double rows = T / (sp ? t : 1.0);
  const double ffn = T * f / t;
  const double heads = static_cast<double>(r.model.heads) / t;
  // The head's columns on one TP rank, padded as the estimator's lm_head_cost() counts them.
  const double v = static_cast<double>(estimator::padded_vocab(r.model.vocab, r.layout.tp)) / t;
  const int N = static_cast<int>(rows), C = static_cast<int>(h), BT = static_cast<int>(T);
  const std::int32_t ignore = kc::kDefaultIgnoreIndex;

  std::map<std::string, double> rates;
  auto record = [&](const char* kind, double bytes, auto make_call) {
    const double seconds = kernel_seconds(level, concurrency, make_call);
    // Less the overhead the model adds back; a kernel hardly above it keeps its whole time.
    const double work = seconds > 2 * kernel_overhead_s && kernel_overhead_s > 0 ? seconds - kernel_overhead_s : seconds;
    if (work > 0 && bytes > 0) rates[kind] = bytes / work;
  };
  auto int_targets = [](int n, int V) {
    auto targets = std::make_shared<std::vector<std::int32_t>>(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) (*targets)[static_cast<std::size_t>(i)] = i % std::max(V, 1);
    return targets;
  };

  // LayerNorm on [rows, h]: forward reads x, writes y (2e); backward reads x, dy, writes dx (3e).
  record("norm_forward", rows * h * 2 * e, [=](int) {
    auto x = buffer(rows * h), y = buffer(rows * h), w = buffer(h), bias = buffer(h), mean = buffer(rows), rstd = buffer(rows);
    return [=] { kc::layernorm_forward(y->data(), mean->data(), rstd->data(), x->data(), w->data(), bias->data(), N, C); };
  });
  record("norm_backward", rows * h * 3 * e, [=](int) {
    auto x = buffer(rows * h), y = buffer(rows * h), dx = buffer(rows * h), dy = buffer(rows * h), w = buffer(h),
         bias = buffer(h), dw = buffer(h), db = buffer(h), mean = buffer(rows), rstd = buffer(rows);
    kc::layernorm_forward(y->data(), mean->data(), rstd->data(), x->data(), w->data(), bias->data(), N, C);
    return [=] { kc::layernorm_backward(dx->data(), dw->data(), db->data(), dy->data(), x->data(), w->data(), mean->data(), rstd->data(), N, C); };
  });
  // Bias + dropout + residual add on [rows, h]: the probe has no dropout, so the residual kernel.
  const auto n_res = static_cast<std::size_t>(rows * h);
  record("residual_forward", rows * h * (3 * e + mask), [=](int) {
    auto a = buffer(rows * h), c = buffer(rows * h), out = buffer(rows * h);
    return [=] { kc::residual_forward(out->data(), a->data(), c->data(), n_res); };
  });
  record("residual_backward", rows * h * (2 * e + mask), [=](int) {
    auto d1 = buffer(rows * h), d2 = buffer(rows * h), dout = buffer(rows * h);
    return [=] { kc::residual_backward(d1->data(), d2->data(), dout->data(), n_res); };
  });
  // GeLU on [T, f/t].
  const auto n_ffn = static_cast<std::size_t>(ffn);
  record("activation_forward", ffn * (gate + 1) * e, [=](int) {
    auto x = buffer(ffn), y = buffer(ffn);
    return [=] { kc::gelu_forward(y->data(), x->data(), n_ffn); };
  });
  record("activation_backward", ffn * (2 * gate + 1) * e, [=](int) {
    auto x = buffer(ffn), dx = buffer(ffn), dy = buffer(ffn);
    return [=] { kc::gelu_backward(dx->data(), x->data(), dy->data(), n_ffn, kernels::Gradient::overwrite); };
  });
  // Attention softmax on b * heads/t * s rows of s scores. The CPU attention kernel fuses its
  // softmax with the score loops, so it cannot be timed alone; the row-wise softmax of the
  // cross-entropy kernel on the same [rows, s] shape stands in for it (forward adds a log per
  // row, backward a one-hot subtraction: both small against the exp per score).
  const double score_rows = b * heads * s, scores = score_rows * s;
  const int SR = static_cast<int>(score_rows), S = static_cast<int>(s);
  record("softmax_forward", scores * 2 * e, [=](int) {
    auto logits = buffer(scores), probs = buffer(scores), losses = buffer(score_rows);
    auto targets = int_targets(SR, S);
    return [=] { kc::softmax_crossentropy_forward(losses->data(), probs->data(), logits->data(), targets->data(), SR, S, ignore); };
  });
  record("softmax_backward", scores * 3 * e, [=](int) {
    auto logits = buffer(scores), probs = buffer(scores), dlogits = buffer(scores), losses = buffer(score_rows),
         dlosses = buffer(score_rows);
    auto targets = int_targets(SR, S);
    kc::softmax_crossentropy_forward(losses->data(), probs->data(), logits->data(), targets->data(), SR, S, ignore);
    return [=] { kc::softmax_crossentropy_backward(dlogits->data(), dlosses->data(), probs->data(), targets->data(), SR, S, ignore); };
  });
  // Cross-entropy on [T, vocab/t] (the probe's vocabulary-parallel loops do the same per rank).
  const int V = static_cast<int>(v);
  record("cross_entropy_forward", T * v * (e + 4), [=](int) {
    auto logits = buffer(T * v), probs = buffer(T * v), losses = buffer(T);
    auto targets = int_targets(BT, V);
    return [=] { kc::softmax_crossentropy_forward(losses->data(), probs->data(), logits->data(), targets->data(), BT, V, ignore); };
  });
  record("cross_entropy_backward", T * v * (4 + e), [=](int) {
    auto logits = buffer(T * v), probs = buffer(T * v), dlogits = buffer(T * v), losses = buffer(T), dlosses = buffer(T);
    auto targets = int_targets(BT, V);
    kc::softmax_crossentropy_forward(losses->data(), probs->data(), logits->data(), targets->data(), BT, V, ignore);
    return [=] { kc::softmax_crossentropy_backward(dlogits->data(), dlosses->data(), probs->data(), targets->data(), BT, V, ignore); };
  });
  // Token + position lookup writing [T, h]; backward scatters into the tables.
  const int B = static_cast<int>(r.micro_batch), Tq = S;
  const double table_rows = std::max(static_cast<double>(r.model.vocab), 1.0);
  record("embedding_forward", T * h * 3 * e, [=](int) {
    auto wte = buffer(table_rows * h), wpe = buffer(s * h), out = buffer(T * h);
    auto tokens = int_targets(BT, static_cast<int>(table_rows));
    return [=] { kc::encoder_forward(out->data(), tokens->data(), wte->data(), wpe->data(), B, Tq, C); };
  });
  record("embedding_backward", T * h * (e + 4) * 2, [=](int) {
    auto dwte = buffer(table_rows * h), dwpe = buffer(s * h), dout = buffer(T * h);
    auto tokens = int_targets(BT, static_cast<int>(table_rows));
    return [=] { kc::encoder_backward(dwte->data(), dwpe->data(), dout->data(), tokens->data(), B, Tq, C); };
  });
  return rates;
}

}  // namespace plansight::probe
