// ProbeResult <-> JSON, the body of the probe's {"event":"result"} line. Memory uses the
// estimator's MemoryBreakdown keys and the timeline Plansight's own timeline JSON, so that the
// same readers serve a probe result, a stored run and an imported trace.
#include "plansight/probe/protocol/result.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plansight/estimator/json_io.h"
#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/timeline_json.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

// A diverged loss is NaN or inf; JSON has neither, so it is written as null (as the store does).
nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

void read_memory(est::JsonReader& in, est::MemoryBreakdown& m) {
  in.read("weights_bytes", m.weights_bytes, 0.0);
  in.read("gradients_bytes", m.gradients_bytes, 0.0);
  in.read("optimizer_bytes", m.optimizer_bytes, 0.0);
  in.read("activations_bytes", m.activations_bytes, 0.0);
  in.read("buffers_bytes", m.buffers_bytes, 0.0);
  in.read("reserve_bytes", m.reserve_bytes, 0.0);
}

// Each element of the array at `key` read by `read_one` with a reader named "key[i]".
template <class F>
void read_array(est::JsonReader& in, std::string_view key, F read_one) {
  const auto* list = in.get(key);
  if (!list) return;
  if (!list->is_array()) {
    in.error(key, "expected an array, got " + est::describe_json(*list));
    return;
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    est::JsonReader item((*list)[i], in.field(key) + "[" + std::to_string(i) + "]", in.errors());
    if (!item.is_object()) {
      in.errors().push_back(make_error(in.field(key) + "[" + std::to_string(i) + "]",
                                       "expected an object, got " + est::describe_json((*list)[i])));
      continue;
    }
    read_one(item);
  }
}

// Prefixes a nested reader's errors with where they sit in the result.
void add_prefixed(std::vector<Diagnostic>& errors, const std::vector<Diagnostic>& nested, const std::string& prefix) {
  for (auto d : nested) {
    d.field = prefix + (d.field.empty() ? std::string() : "." + d.field);
    errors.push_back(std::move(d));
  }
}

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
                      {"current", est::to_json(m.current)},
                      {"peak", est::to_json(m.peak)},
                      {"peak_total_bytes", m.peak_total_bytes}});
  }
  nlohmann::json out = {{"device", r.device},
                        {"ranks_share_device", r.ranks_share_device},
                        {"steps", std::move(steps)},
                        {"step_time_s", r.step_time_s},
                        {"timeline", est::to_json(r.timeline)},
                        {"memory", std::move(memory)},
                        {"profile", r.profile ? est::to_json(*r.profile) : nlohmann::json()},
                        {"stopped_early", r.stopped_early}};
  if (!r.device_report.empty()) out["device_report"] = r.device_report;
  return out;
}

Result<ProbeResult> probe_result_from_json(const nlohmann::json& json) {
  if (!json.is_object()) return make_error("", "expected a JSON object, got " + est::describe_json(json));
  std::vector<Diagnostic> errors;
  est::JsonReader in(json, "", errors);
  ProbeResult r;
  for (auto key : {"device", "steps", "step_time_s", "memory", "stopped_early"}) {
    if (!in.has(key)) in.error(key, "missing");
  }
  in.read("device", r.device);
  in.read("ranks_share_device", r.ranks_share_device);
  read_array(in, "steps", [&](est::JsonReader& s) {
    StepResult step;
    s.read("step", step.step, 0);
    step.loss = std::numeric_limits<double>::quiet_NaN();  // null (a diverged step) reads as absent
    s.read("loss", step.loss);
    s.read("seconds", step.seconds, 0.0);
    s.read("loss_scale", step.loss_scale, 0.0);
    s.read("skipped", step.skipped);
    r.steps.push_back(step);
  });
  in.read("step_time_s", r.step_time_s, 0.0);
  if (const auto* timeline = in.get("timeline"); timeline && !timeline->is_null()) {
    auto t = est::timeline_from_json(*timeline);
    if (t) r.timeline = std::move(*t);
    else add_prefixed(errors, t.errors(), "timeline");
  }
  // A probe measures; whatever a writer said, its timeline is a measured one.
  r.timeline.source = est::TimelineSource::measured;
  read_array(in, "memory", [&](est::JsonReader& m) {
    RankMemory rank;
    std::int64_t id = 0;
    m.read("rank", id, 0, INT32_MAX);
    rank.rank = static_cast<std::int32_t>(id);
    if (auto current = m.child("current")) read_memory(*current, rank.current);
    if (auto peak = m.child("peak")) read_memory(*peak, rank.peak);
    m.read("peak_total_bytes", rank.peak_total_bytes, 0.0);
    r.memory.push_back(rank);
  });
  if (const auto* profile = in.get("profile"); profile && !profile->is_null()) {
    auto p = est::hardware_profile_from_json(*profile);
    if (p) r.profile = std::move(*p);
    else add_prefixed(errors, p.errors(), "profile");
  }
  in.read("stopped_early", r.stopped_early);
  if (const auto* report = in.get("device_report")) {
    if (report->is_object()) r.device_report = *report;
    else in.error("device_report", "expected an object, got " + est::describe_json(*report));
  }
  if (!errors.empty()) return errors;
  return r;
}

double step_seconds(const ProbeResult& r) {
  if (r.step_time_s > 0) return r.step_time_s;
  std::vector<double> seconds;
  for (const auto& s : r.steps) seconds.push_back(s.seconds);
  if (seconds.empty()) return 0;
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  return n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
}

}  // namespace plansight::probe
