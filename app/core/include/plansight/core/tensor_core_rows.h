// Tensor-core share of kernel time, predicted beside measured: one function reads it off any
// Timeline, for the step, per phase and per kernel class, so that the two sides of a comparison
// are summed the same way. A kernel is on tensor cores when its span is flagged or its name's
// class is tensor_core_gemm (estimator::span_class), as the probe's own figure counts it. A
// predicted op span holds an op's GEMMs and element-wise kernels in one block, so the prediction
// passes its phases' GEMM shares of compute time (predicted_gemm_share.h), and each of its
// compute spans counts that share as tensor-core GEMM time and the rest as other compute.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/timeline.h"

namespace plansight::core {

struct TensorCoreTime {
  double kernel_s = 0;       // kernel time: kernels and collectives (not sends, copies or host time)
  double tensor_core_s = 0;  // of which on tensor cores
  std::optional<double> share() const {
    return kernel_s > 0 ? std::optional<double>(tensor_core_s / kernel_s) : std::nullopt;
  }
};

// The share of a predicted phase's compute time spent in GEMMs (0..1). `backward` includes the
// weight gradients; where a schedule runs them as weight_grad spans of their own, backward spans
// take `backward_input` instead.
struct PhaseGemmShares {
  double forward = 0, backward = 0, backward_input = 0, weight_grad = 0, recompute = 0;
};

struct TensorCoreShares {
  TensorCoreTime step;
  std::map<estimator::Phase, TensorCoreTime> by_phase;
  std::map<estimator::KernelClass, TensorCoreTime> by_kernel_class;
};

// Over the kernel and collective spans of every track. `gemm_shares`: a predicted timeline's
// (null for a measured or imported one, whose spans say for themselves).
TensorCoreShares tensor_core_shares(const estimator::Timeline& timeline, const PhaseGemmShares* gemm_shares = nullptr);

// One row of the comparison: "step", a phase ("forward") or a kernel class ("tensor_core_gemm").
// The step and a phase: the share of their kernel time on tensor cores. A kernel class: its part
// of the step's kernel time (where the time went), since a class's own tensor-core share is 1 or 0
// by what the class is (estimator::span_class puts flagged kernels in tensor_core_gemm).
struct TensorCoreRow {
  enum class Group { step, phase, kernel_class };
  Group group = Group::step;
  std::string name;
  TensorCoreTime predicted, measured;
  std::optional<double> predicted_figure, measured_figure;  // 0..1, as above; none without kernel time
  // predicted - measured (+0.05: the estimator put 5 points more there, the sign of the page's
  // errors); none where a side has no figure.
  std::optional<double> difference() const;
};

// The step, then the phases and the kernel classes either side has, in the enums' order.
std::vector<TensorCoreRow> tensor_core_rows(const TensorCoreShares& predicted, const TensorCoreShares& measured);

}  // namespace plansight::core
