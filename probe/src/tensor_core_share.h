// Tensor-core use of a measured GPU step: the share of kernel time spent in kernels that run on
// tensor cores, for the step, per phase and per kernel class, and the most expensive kernels.
// Which kernels run on tensor cores is read from the spans' tensor-core flag, set by the kernel-
// name rules (estimator/kernel_rules.h: cuBLASLt's sm80/sm90 HMMA/GMMA kernel names). When a
// step was also profiled per kernel with hardware counters (runtime/cuda/tensor_core_counters.h),
// compare_with_counters() puts the counters' verdict beside the rules': per kernel name, the
// step's share by counters (the traced step's kernel times, matched by name), and the kernels
// where the two disagree. Plain C++: tested on hand-made timelines and readings without a GPU.
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
  std::string name;
  double tensor_instructions = 0;  // warp-level MMA instructions (HMMA, and GMMA on Hopper)
  double tensor_active_pct = 0;    // tensor pipe active, % of peak sustained
};

// One kernel name, by counters and by name rules.
struct CounterKernel {
  std::string name;
  std::int64_t profiled_launches = 0;     // launches with counters (0: only in the traced step)
  std::int64_t tensor_core_launches = 0;  // of which counters saw tensor-core instructions
  double tensor_instructions = 0;         // summed over its profiled launches
  double mean_tensor_active_pct = 0;      // over its profiled launches
  bool counters_tensor_core = false;      // any profiled launch executed tensor-core instructions
  bool rules_tensor_core = false;         // the kernel-name rules' verdict
  double seconds = 0;                     // its kernel time in the traced step (0: not in it)
  bool disagrees() const { return profiled_launches > 0 && counters_tensor_core != rules_tensor_core; }
};

struct CounterComparison {
  std::string chip;
  std::int64_t profiled_step = 0;  // 1-based number of the step the counters profiled
  std::size_t ranges = 0, dropped_ranges = 0, passes = 0;
  // The traced step's kernel time; tensor_core_seconds: of kernels whose counters saw
  // tensor-core instructions. Kernels the profiled step did not run count as not on tensor cores.
  ShareOf step;
  double unprofiled_seconds = 0;       // traced kernel time of names without counters
  double tensor_active_pct = 0;        // kernels' mean tensor-pipe activity, weighted by traced time
  std::vector<CounterKernel> kernels;  // by traced time, then name
  std::vector<std::string> disagreements;  // names where counters and rules differ, as in `kernels`
  std::string note;                    // e.g. why some kernels have no name
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
// The counters' view of the kernels of `timeline` (the traced step) from `readings` (a profiled
// step's launches; readings without a name are left out). Name-rule verdicts come from the
// timeline's spans, or, for kernels it lacks, from the default kernel rules. The caller fills in
// chip, profiled_step, ranges, dropped_ranges, passes and note.
CounterComparison compare_with_counters(const estimator::Timeline& timeline, const std::vector<CounterReading>& readings);
nlohmann::json to_json(const TensorCoreShare& share);

}  // namespace plansight::probe
