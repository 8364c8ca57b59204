// What a finished run measured, kept as the run's summary JSON: step time, loss per step, memory
// per category and named metrics. NaN is a real value here (a diverged loss) and is written as
// JSON null, which reads back as NaN.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::store {

struct RunSummary {
  std::optional<double> step_time_s;                 // mean iteration time, seconds
  std::vector<double> loss_per_step;                 // index = step
  std::map<std::string, std::int64_t> memory_bytes;  // per category: "weights", "activations", ...
  std::map<std::string, double> metrics;             // e.g. "mfu", "tokens_per_s", "bubble_fraction"
  // What the run's device reported (plansight-probe's device_report: GPU, precision, timeline
  // source, tensor-core share); an empty object for CPU runs and imports.
  nlohmann::json device = nlohmann::json::object();

  bool operator==(const RunSummary& other) const;  // NaN equals NaN here
};

nlohmann::json to_json(const RunSummary& summary);
// Unknown keys are ignored, so that summaries written by a newer program still read.
Result<RunSummary> summary_from_json(const nlohmann::json& json);

}  // namespace plansight::store
