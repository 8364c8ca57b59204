// ProbeResult -> JSON, the body of the probe's {"event":"result"} line. Memory uses the
// estimator's MemoryBreakdown keys and the timeline Plansight's own timeline JSON, so the app
// reads both back with the estimator's readers and never links the probe.
#include "plansight/probe/probe_result.h"

#include <cmath>

#include "plansight/estimator/json_io.h"
#include "plansight/estimator/timeline_json.h"

namespace plansight::probe {
namespace {

// A diverged loss is NaN or inf; JSON has neither, so it is written as null (as the store does).
nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

}  // namespace

nlohmann::json to_json(const ProbeResult& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps) {
    nlohmann::json step = {{"step", s.step}, {"loss", number_or_null(s.loss)}, {"seconds", s.seconds}};
    if (s.loss_scale > 0) {
      step["loss_scale"] = s.loss_scale;
      step["skipped"] = s.skipped;
    }
    steps.push_back(std::move(step));
  }
  nlohmann::json memory = nlohmann::json::array();
  for (const auto& m : r.memory) {
    memory.push_back({{"rank", m.rank},
                      {"current", estimator::to_json(m.current)},
                      {"peak", estimator::to_json(m.peak)},
                      {"peak_total_bytes", m.peak_total_bytes}});
  }
  nlohmann::json out = {{"device", r.device},
          {"ranks_share_device", r.ranks_share_device},
          {"steps", std::move(steps)},
          {"step_time_s", r.step_time_s},
          {"timeline", estimator::to_json(r.timeline)},
          {"memory", std::move(memory)},
          {"profile", r.profile ? estimator::to_json(*r.profile) : nlohmann::json()},
          {"stopped_early", r.stopped_early}};
  if (!r.device_report.empty()) out["device_report"] = r.device_report;
  return out;
}

}  // namespace plansight::probe
