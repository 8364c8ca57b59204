// A run summary's metrics as people read them: "stopped early: no" rather than
// "stopped_early 0.0000", counts as whole numbers, rates and times with their units. The CLI's
// `runs show` and the app's Runs page print the same words.
#pragma once

#include <string>
#include <string_view>

namespace plansight::store {

struct MetricText {
  std::string label;  // "stopped early", "tokens/s", "window"
  std::string value;  // "no", "12,345", "13.0 ms"
};

// Known names (run_summary.h's writers: probe and trace import) get their own words; any other
// metric keeps its name and prints with 4 significant digits.
MetricText describe_metric(std::string_view name, double value);

}  // namespace plansight::store
