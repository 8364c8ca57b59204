// Counter configuration for CUPTI's range profiler, built on the host with the profiler host API
// (cupti_profiler_host.h): given a chip name ("GA100", "GH100") and metric names it produces the
// config image that a profiling session on that chip loads, and the number of replay passes the
// metrics need. No GPU or driver is involved, so a configuration is checked (and tested) on any
// machine with the CUDA toolkit; the chip names come from cuptiProfilerHostGetSupportedChips.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

struct MetricConfig {
  std::string chip;
  std::vector<std::string> metrics;
  std::vector<std::uint8_t> config_image;  // for cuptiRangeProfilerSetConfig
  std::size_t passes = 0;                  // kernel replays needed to collect every metric
};

// The chips this CUPTI's profiler host API knows.
Result<std::vector<std::string>> profiler_chips();

// One description per metric ("# of warp instructions executed by tensor pipe ..."), or an
// error naming each metric the chip does not know.
Result<std::vector<std::string>> describe_metrics(std::string_view chip, const std::vector<std::string>& metrics);

// The range profiler's config image for `metrics` on `chip`. Errors: an unknown chip (listing the
// known ones), metric names the chip does not know (each named with the chip), no metrics, or a
// failing CUPTI call (named).
Result<MetricConfig> build_metric_config(std::string_view chip, const std::vector<std::string>& metrics);

}  // namespace plansight::runtime::cuda
