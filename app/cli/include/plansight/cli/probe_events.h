// The app's side of the plansight-probe protocol (probe/README.md): JSON lines read into
// events, and a probe result turned into what the store keeps. Pure JSON handling, so that the
// CLI and the GUI read probe output without linking the probe, runtime or kernels.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/store/run_summary.h"

namespace plansight::cli {

struct ProbeProgress {
  std::int64_t step = 0, steps = 0;
  double loss = 0, elapsed_s = 0, eta_s = 0;
};

// Everything a probe run said, in arrival order of kind.
struct ProbeEvents {
  std::optional<nlohmann::json> started;  // {"device", "world_size", "request", ...}
  std::optional<ProbeProgress> last_progress;
  std::optional<nlohmann::json> result;   // the result event without its "event" key
  std::vector<Diagnostic> errors;         // from an error event
  bool done = false;
  std::vector<std::string> stray_lines;   // output that was not a protocol event (kept for messages)
};

// Takes one stdout line; returns the event's name ("progress", ...) or "" for a stray line.
std::string accept_probe_line(ProbeEvents& events, std::string_view line);

// Memory categories in the estimator's MemoryBreakdown order, as the store and `compare` name them.
const std::vector<std::string>& memory_categories();  // weights, gradients, optimizer, activations, buffers, reserve, total

// Per category, the largest peak over ranks (bytes); "total" is the largest whole-rank peak.
std::map<std::string, std::int64_t> measured_memory(const nlohmann::json& result);

// Median step time, loss per step, memory per category, and metrics (tokens_per_s, world_size,
// steps, stopped_early) of a result event; `request` is the started event's request.
store::RunSummary summary_of(const nlohmann::json& result, const nlohmann::json& request);

}  // namespace plansight::cli
