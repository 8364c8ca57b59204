// The app's side of the plansight-probe protocol: the JSON lines of a run read with the
// protocol's own reader (plansight/probe/protocol/events.h) into what the run said, and a probe
// result turned into what the store keeps. The CLI and the GUI read probe output through this,
// without linking the probe, runtime or kernels.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/probe/protocol/events.h"
#include "plansight/store/run_summary.h"

namespace plansight::core {

// Everything a probe run said, by kind.
struct ProbeEvents {
  std::optional<probe::StartedEvent> started;
  std::optional<probe::ProgressEvent> last_progress;
  std::optional<probe::ProbeResult> result;
  std::optional<probe::ErrorEvent> error;
  bool done = false;
  std::vector<std::string> stray_lines;       // output that was not a protocol event (kept for messages)
  std::vector<Diagnostic> protocol_errors;    // known events that broke the schema, naming the field
};

// Takes one stdout line; returns the event's name ("progress", ...; also for an event this
// reader does not know, which it skips) or "" for a stray or malformed line.
std::string accept_probe_line(ProbeEvents& events, std::string_view line);

// Memory categories in the estimator's MemoryBreakdown order, as the store and `compare` name them.
const std::vector<std::string>& memory_categories();  // weights, gradients, optimizer, activations, buffers, reserve, total

// Per category, the largest peak over ranks (bytes); "total" is the largest whole-rank peak.
std::map<std::string, std::int64_t> measured_memory(const probe::ProbeResult& result);

// Median step time, loss per step, memory per category, the device report, and metrics
// (tokens_per_s, world_size, steps, stopped_early, tensor_core_share) of a result of `request`.
store::RunSummary summary_of(const probe::ProbeResult& result, const probe::ProbeRequest& request);

}  // namespace plansight::core
