// Predicted vs measured per operator of a probe run: which of the layer's kernels the time model
// costs too high or too low, where the phases only say that forward or backward is off. The
// predicted side is the estimator's operator model (operator_costs.h) with the run's hardware
// profile, summed over every rank and micro-batch of the step; the measured side is the run's
// traced step, summed over its spans of each of the probe's operators (the CPU probe names its
// spans after them: probe/src/transformer_block.cpp, embedding_head.cpp). Both are processor
// time: a span's thread CPU clock where it has one (Span::cpu_ns), else its duration, so ranks
// that share cores count each operator's work once, not the time it waited for a core.
//
// A GPU run's spans are CUDA kernels, copies and memsets: each counts for the operator whose NVTX
// range launched it (Span::operator_id), with its duration on the GPU. Runs traced before the
// timeline kept operators (store timeline format 3) match no row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/timeline.h"

namespace plansight::core {

struct OperatorComparison {
  std::string probe_name;   // the probe's span name: "qkv", "gelu", ...
  std::string operators;    // the operator model's: "QKV", "activation (GeLU)", ...
  estimator::Phase phase = estimator::Phase::forward;  // forward, backward (input and weight gradients) or recompute
  double predicted_s = 0;   // over every rank and micro-batch of the step
  double measured_s = 0;    // over the traced step's spans of this operator and phase
  std::int64_t measured_calls = 0;
};

struct OperatorComparisons {
  std::vector<OperatorComparison> rows;  // in the order a layer runs them, then the head
  // Compute spans of the traced step that are none of the rows' operators (embedding, optimizer,
  // ...), with their processor time: what the per-operator table leaves out.
  double unmatched_measured_s = 0;
  std::int64_t unmatched_spans = 0;
  bool measured_cpu_time = false;  // the measured side read thread CPU clocks
  bool measured_device_work = false;  // ... or GPU kernels, copies and memsets by their operator
  // Whether any span of the run was one of the rows' operators (none: a GPU run traced without
  // operators, or a timeline not the probe's).
  bool matched() const;
  // What the measured side is, for the tables' notes: "processor time: each span's thread CPU
  // clock", "... each span's duration", or the GPU's.
  std::string measured_basis() const;
};

// `plan` as plan_of_probe_run() gives it, `profile` the run's, `padded_vocab` the estimate's.
// Dense layers only (a probe model has no MoE layers).
OperatorComparisons compare_operators(const estimator::Plan& plan, const estimator::HardwareProfile* profile,
                                      std::int64_t padded_vocab, const estimator::Timeline& measured);

}  // namespace plansight::core
