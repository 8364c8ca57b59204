// Tensor-core activity measured by hardware counters (CUPTI's range profiler with the metrics of
// tensor_metrics.h, configured through metric_config.h), two ways: measure_tensor_cores runs a
// workload once per replay pass inside one user range (user replay: the workload must give the
// same result when run again), and the per-kernel measurement profiles each kernel in its own
// auto range with kernel replay, where CUPTI saves and restores the device memory a kernel can
// touch between its passes, so any workload (a training step included) runs once. Counters are often not permitted
// (the driver's NVreg_RestrictProfilingToAdminUsers=1 default on Linux, CUPTI_ERROR_INSUFFICIENT_
// PRIVILEGES), and new chips have no known tensor metric: then the result says so, and the caller
// falls back to classifying kernels by name (estimator/kernel_rules.h), which is what the
// activity tracer's spans already carry as their tensor-core flag.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

struct TensorCoreMeasurement {
  bool from_counters = false;        // false: see `fallback_reason`; use kernel-name rules
  std::string fallback_reason;       // why counters were not used (empty when they were)
  std::string chip;                  // "GA100", "GH100", ...
  std::vector<std::string> metrics;  // tensor_core_metrics(chip).all()
  std::vector<double> values;        // one per metric, for the workload's range
  std::size_t passes = 0;            // replays the workload ran
};

// Runs `workload` (enqueue work on `device` and synchronise it; an error stops the measurement)
// once per replay pass and evaluates the tensor-core metrics. Errors: a failing workload, or a
// CUPTI call that fails for another reason than missing permission or support (named).
Result<TensorCoreMeasurement> measure_tensor_cores(int device, const std::function<Result<bool>()>& workload);

// One kernel launch's counters (one auto range).
struct KernelTensorCores {
  std::size_t range = 0;       // CUPTI's range index: the kernel's place in execution order
  std::string kernel;          // display name (kernel_names.h); empty when names are unknown
  std::vector<double> values;  // one per metric of PerKernelTensorCores::metrics
  double duration_ns = 0;      // PerKernelTensorCores::duration_metric: the kernel's GPU time
  // metrics[0] is the tensor pipe's active cycles, % of peak; the others count MMA instructions.
  double tensor_active_pct() const { return values.empty() ? 0.0 : values[0]; }
  // Information only: on GH100 a kernel without MMA work reads non-zero counts (tensor_metrics.h).
  double tensor_instructions() const;
  // The counters' verdict: the tensor pipe was active (tensor_pipe_active, tensor_metrics.h).
  bool uses_tensor_cores() const;
  // Measured under kernel replay, one kernel at a time: it weighs kernels against each other,
  // but kernels that overlap in a normal run do not here, so the sum is not a step time.
  double duration_s() const { return duration_ns * 1e-9; }
};

struct PerKernelTensorCores {
  bool from_counters = false;        // false: see `fallback_reason`; use kernel-name rules
  std::string fallback_reason;       // why counters were not used (empty when they were)
  std::string chip;
  std::vector<std::string> metrics;  // tensor_core_metrics(chip).all()
  std::string duration_metric;       // kKernelDurationMetric (tensor_metrics.h), read beside them
  std::vector<KernelTensorCores> kernels;  // every range recorded, in execution order
  std::size_t ranges = 0;            // ranges in the counter data (cuptiRangeProfilerGetCounterDataInfo)
  std::size_t dropped_ranges = 0;    // kernels that ran without counters: beyond max_kernels, or
                                     // dropped by the decoder; never read as zeros
  std::size_t launches = 0;          // successful kernel launches seen on the context (0: names unknown)
  std::size_t passes = 0;            // replays of each kernel the metrics need (metric_config)
  std::string names_note;            // why `kernel` is empty, when it is
};

// Kernel replay with auto ranges on `device`'s primary context, from the calling thread: start()
// before the workload is enqueued, finish() after it, both on the thread that enqueues it (the
// one thread that launches on the context while it runs: kernel replay serialises the kernels,
// and launch order names the ranges). Every kernel runs `passes` times, so the workload runs
// 10-100x slower than usual: time nothing under it.
class KernelCounterSession {
 public:
  // Errors: a CUDA or CUPTI call that fails for another reason than missing permission or
  // support (named). A refusal is not an error: finish() then returns from_counters false.
  static Result<std::unique_ptr<KernelCounterSession>> start(int device, std::size_t max_kernels);
  // When finish() was not called: synchronises the device, unsubscribes the launch names, then
  // stops and disables the profiler.
  ~KernelCounterSession();
  KernelCounterSession(const KernelCounterSession&) = delete;
  KernelCounterSession& operator=(const KernelCounterSession&) = delete;
  // Synchronises the device, stops, decodes and evaluates every range. Call once.
  Result<PerKernelTensorCores> finish();

  struct State;

 private:
  KernelCounterSession() = default;
  std::unique_ptr<State> state_;
};

// start(), `workload` once (enqueue on `device` and synchronise it), finish(). `max_kernels`
// sizes the counter data: kernels beyond it are counted in dropped_ranges.
Result<PerKernelTensorCores> measure_tensor_cores_per_kernel(int device, const std::function<Result<bool>()>& workload,
                                                            std::size_t max_kernels);

}  // namespace plansight::runtime::cuda
