// Tensor-core use of a measured GPU step: the share of kernel time spent in kernels that run on
// tensor cores, for the step, per phase and per kernel class, and the most expensive kernels.
// Which kernels run on tensor cores is read from the spans' tensor-core flag, set by the kernel-
// name rules (estimator/kernel_rules.h: cuBLASLt's sm80/sm90 HMMA/GMMA kernel names); when the
// GPU's counters were readable, `source` says so and `counter_share` holds their figure. Plain
// C++: tested on hand-made timelines without a GPU.
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

struct TensorCoreShare {
  std::string source = "kernel-name rules";
  std::string counters_note;            // why hardware counters were not used, when they were not
  std::optional<double> counter_share;  // tensor-pipe activity from counters, 0..1
  ShareOf step;
  std::map<std::string, ShareOf> by_phase;         // "forward", "backward", ...
  std::map<std::string, ShareOf> by_kernel_class;  // "tensor_core_gemm", "compute", "memory", "communication"
  std::vector<KernelTime> top_kernels;             // by total time, at most 10
};

// Over the kernel spans (kind kernel or collective) of every track of `timeline`.
TensorCoreShare tensor_core_share(const estimator::Timeline& timeline);
nlohmann::json to_json(const TensorCoreShare& share);

}  // namespace plansight::probe
