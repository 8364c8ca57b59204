// Tensor-core activity measured by hardware counters (CUPTI's range profiler with the metrics of
// tensor_metrics.h, configured through metric_config.h): a workload runs once per replay pass
// inside one user range, and the metrics are evaluated for it. Counters are often not permitted
// (the driver's NVreg_RestrictProfilingToAdminUsers=1 default on Linux, CUPTI_ERROR_INSUFFICIENT_
// PRIVILEGES), and new chips have no known tensor metric: then the result says so, and the caller
// falls back to classifying kernels by name (estimator/kernel_rules.h), which is what the
// activity tracer's spans already carry as their tensor-core flag.
#pragma once

#include <functional>
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

}  // namespace plansight::runtime::cuda
