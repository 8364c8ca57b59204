// tensor_core_shares() and tensor_core_rows() (tensor_core_rows.h).
#include "plansight/core/tensor_core_rows.h"

#include <algorithm>

#include "plansight/estimator/timeline_metrics.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

void add(TensorCoreTime& t, double kernel_s, double tensor_core_s) {
  t.kernel_s += kernel_s;
  t.tensor_core_s += tensor_core_s;
}

double gemm_share(const PhaseGemmShares& g, est::Phase phase, bool split_weight_grad) {
  switch (phase) {
    case est::Phase::forward: return g.forward;
    case est::Phase::backward: return split_weight_grad ? g.backward_input : g.backward;
    case est::Phase::weight_grad: return g.weight_grad;
    case est::Phase::recompute: return g.recompute;
    default: return 0;  // the optimizer and unlabelled work: element-wise kernels
  }
}

bool has_weight_grad(const est::Timeline& timeline) {
  for (const est::Track& track : timeline.tracks) {
    for (const est::Span& s : track.spans) {
      if (s.phase == est::Phase::weight_grad) return true;
    }
  }
  return false;
}

}  // namespace

TensorCoreShares tensor_core_shares(const est::Timeline& timeline, const PhaseGemmShares* gemm_shares) {
  TensorCoreShares out;
  const auto classes = est::classify_names(timeline, est::KernelClassifier());
  const bool split_weight_grad = gemm_shares && has_weight_grad(timeline);
  for (const est::Track& track : timeline.tracks) {
    for (const est::Span& span : track.spans) {
      // The probe's figure sums the same spans (probe/src/tensor_core_share.cpp).
      if (span.kind != est::SpanKind::kernel && span.kind != est::SpanKind::collective) continue;
      const double seconds = static_cast<double>(span.duration_ns) * 1e-9;
      const est::KernelClass c = est::span_class(span, classes);
      auto& phase = out.by_phase[span.phase];
      if (gemm_shares && c == est::KernelClass::compute) {
        // A predicted op: its GEMMs' part of the block on tensor cores, the rest other compute.
        const double f = std::clamp(gemm_share(*gemm_shares, span.phase, split_weight_grad), 0.0, 1.0);
        add(out.step, seconds, f * seconds);
        add(phase, seconds, f * seconds);
        if (f > 0) add(out.by_kernel_class[est::KernelClass::tensor_core_gemm], f * seconds, f * seconds);
        if (f < 1) add(out.by_kernel_class[est::KernelClass::compute], (1 - f) * seconds, 0);
        continue;
      }
      const double on_tensor_cores = c == est::KernelClass::tensor_core_gemm ? seconds : 0;
      add(out.step, seconds, on_tensor_cores);
      add(phase, seconds, on_tensor_cores);
      add(out.by_kernel_class[c], seconds, on_tensor_cores);
    }
  }
  return out;
}

std::optional<double> TensorCoreRow::difference() const {
  if (!predicted_figure || !measured_figure) return std::nullopt;
  return *predicted_figure - *measured_figure;
}

namespace {

std::optional<double> part_of(const TensorCoreTime& part, const TensorCoreTime& whole) {
  return whole.kernel_s > 0 ? std::optional<double>(part.kernel_s / whole.kernel_s) : std::nullopt;
}

}  // namespace

std::vector<TensorCoreRow> tensor_core_rows(const TensorCoreShares& predicted, const TensorCoreShares& measured) {
  std::vector<TensorCoreRow> rows;
  TensorCoreRow step;
  step.name = "step";
  step.predicted = predicted.step;
  step.measured = measured.step;
  step.predicted_figure = predicted.step.share();
  step.measured_figure = measured.step.share();
  rows.push_back(step);
  // std::map orders by the enums' values: forward before backward, as the phase table reads.
  std::map<est::Phase, TensorCoreRow> phases;
  for (const auto& [p, t] : predicted.by_phase) phases[p].predicted = t;
  for (const auto& [p, t] : measured.by_phase) phases[p].measured = t;
  for (auto& [p, row] : phases) {
    row.group = TensorCoreRow::Group::phase;
    row.name = std::string(est::to_string(p));
    row.predicted_figure = row.predicted.share();
    row.measured_figure = row.measured.share();
    rows.push_back(row);
  }
  std::map<est::KernelClass, TensorCoreRow> classes;
  for (const auto& [c, t] : predicted.by_kernel_class) classes[c].predicted = t;
  for (const auto& [c, t] : measured.by_kernel_class) classes[c].measured = t;
  for (auto& [c, row] : classes) {
    row.group = TensorCoreRow::Group::kernel_class;
    row.name = std::string(est::to_string(c));
    row.predicted_figure = part_of(row.predicted, predicted.step);
    row.measured_figure = part_of(row.measured, measured.step);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace plansight::core
