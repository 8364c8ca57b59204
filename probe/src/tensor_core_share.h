// Tensor-core use of a measured GPU step: the share of kernel time spent in kernels that run on
// tensor cores, for the step, per phase and per kernel class, and the most expensive kernels.
// Which kernels run on tensor cores is read from the spans' tensor-core flag, set by the kernel-
// name rules (estimator/kernel_rules.h: cuBLASLt's sm80/sm90 HMMA/GMMA kernel names). A run that
// profiles a step per kernel with hardware counters (runtime/cuda/tensor_core_counters.h) is not
// traced (the probe never runs the range profiler and the activity tracer in one process), so
// compare_with_counters() weighs the launches by the durations read with their counters and puts
// the counters' verdict (tensor pipe active) beside the rules' on the same launches: per kernel
// name, the share by counters and by names, and the kernels where the two disagree. Plain C++:
// tested on hand-made timelines and readings without a GPU.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/timeline.h"

namespace plansight::probe {

struct KernelTime {
  std::string name;
  double seconds = 0;
  std::int64_t launches = 0;
  bool tensor_core = false;
};

struct ShareOf {
  double seconds = 0;              // kernel time
  double tensor_core_seconds = 0;  // of which on tensor cores
  double share() const { return seconds > 0 ? tensor_core_seconds / seconds : 0; }
};

// One profiled kernel launch: its display name (as the timeline names kernels) and its counters.
struct CounterReading {
  std::string name;                // empty when the launch's name is unknown
  double tensor_instructions = 0;  // warp-level MMA instructions (HMMA, and GMMA on Hopper): information only
  double tensor_active_pct = 0;    // tensor pipe active, % of peak sustained: the verdict (> 0)
  double seconds = 0;              // the launch's GPU time, read with its counters (gpu__time_duration.sum)
};

// The counters' verdict on one launch: its tensor pipe was active for any cycle. Not "MMA
// instructions > 0": on an H200 (GH100) a GeLU without MMA work read 2048 tensor instructions and
// 0.000 % active (runtime/cuda/tensor_metrics.h, kTensorActivePctThreshold, says why 0).
inline constexpr double kCountersTensorActivePctThreshold = 0.0;
inline bool counters_tensor_core(const CounterReading& r) { return r.tensor_active_pct > kCountersTensorActivePctThreshold; }

// One kernel name, by counters and by name rules.
struct CounterKernel {
  std::string name;                       // empty: the launches without a name, together
  std::int64_t profiled_launches = 0;     // launches with counters
  std::int64_t tensor_core_launches = 0;  // of which the tensor pipe was active
  double seconds = 0;                     // its launches' summed duration (counters)
  double tensor_instructions = 0;         // summed over its launches (information only)
  double mean_tensor_active_pct = 0;      // over its launches
  bool counters_tensor_core = false;      // any launch had its tensor pipe active
  bool rules_tensor_core = false;         // the kernel-name rules' verdict (false without a name)
  bool disagrees() const { return !name.empty() && counters_tensor_core != rules_tensor_core; }
};

// One step profiled per kernel with counters and not traced: every launch's duration comes from
// its counters, and two classifiers weigh the same durations: the counters (a launch whose tensor
// pipe was active) and the kernel-name rules (estimator/kernel_rules.h: classify(name) ==
// tensor_core_gemm). Durations are measured under kernel replay, one kernel at a time: they weigh
// kernels against each other, but their sum is not the step's time.
struct CounterComparison {
  std::string chip;
  std::int64_t profiled_step = 0;  // 1-based number of the step the counters profiled
  std::size_t ranges = 0, dropped_ranges = 0, passes = 0;
  ShareOf by_counters;               // duration of launches whose tensor pipe was active
  ShareOf by_names;                  // duration of launches whose name the rules call a tensor-core GEMM
  double unnamed_seconds = 0;        // duration of launches without a name (not tensor cores by the rules)
  double tensor_active_pct = 0;      // tensor-pipe activity over every launch, weighted by duration
  double tensor_core_active_pct = 0; // the same over the launches whose tensor pipe was active
  std::vector<CounterKernel> kernels;      // by duration, then name
  std::vector<std::string> disagreements;  // names where counters and rules differ, as in `kernels`
  std::string names_note;                  // why some launches have no name
  std::string note;                        // e.g. launches without counters (dropped)
};

struct TensorCoreShare {
  std::string source = "kernel-name rules";
  std::string counters_note;                  // why hardware counters were not used, when they were not
  std::optional<CounterComparison> counters;  // when a step was profiled per kernel
  ShareOf step;
  std::map<std::string, ShareOf> by_phase;         // "forward", "backward", ...
  std::map<std::string, ShareOf> by_kernel_class;  // "tensor_core_gemm", "compute", "memory", "communication"
  std::vector<KernelTime> top_kernels;             // by total time, at most 10
};

// Over the kernel spans (kind kernel or collective) of every track of `timeline`.
TensorCoreShare tensor_core_share(const estimator::Timeline& timeline);
// The counters' and the name rules' view of a profiled step's launches, weighed by the launches'
// own durations (default kernel rules). The caller fills in chip, profiled_step, ranges,
// dropped_ranges, passes, names_note and note.
CounterComparison compare_with_counters(const std::vector<CounterReading>& readings);
// The step's share for a run without a traced timeline: `step` and `by_kernel_class` by the name
// rules over the counters' durations (named launches by class), `top_kernels` by duration,
// `by_phase` empty (phases come from the tracer's NVTX ranges), and `counters` set to `c`.
TensorCoreShare tensor_core_share_from_counters(CounterComparison c);
nlohmann::json to_json(const TensorCoreShare& share);

}  // namespace plansight::probe
