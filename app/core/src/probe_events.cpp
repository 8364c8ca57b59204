// Reading plansight-probe's JSON lines (see probe_events.h). The protocol's reader decides what a
// line is; this keeps what the app needs and never fails the run over a line: a stray line is
// kept for the error message, a malformed event becomes a protocol error naming its field.
#include "plansight/core/probe_events.h"

#include <algorithm>
#include <utility>

namespace plansight::core {

std::string accept_probe_line(ProbeEvents& events, std::string_view line) {
  if (line.empty()) return "";
  probe::EventLine read = probe::read_event_line(line);
  switch (read.kind) {
    case probe::EventLine::Kind::not_an_event:
      events.stray_lines.emplace_back(line);
      return "";
    case probe::EventLine::Kind::malformed:
      for (auto& e : read.errors) {
        e.message = "plansight-probe wrote a " + read.name + " event this app cannot read: " + e.message;
        events.protocol_errors.push_back(std::move(e));
      }
      return "";
    case probe::EventLine::Kind::unknown_event:
      return read.name;
    case probe::EventLine::Kind::event:
      break;
  }
  std::visit(
      [&](auto&& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, probe::StartedEvent>) events.started = std::move(e);
        else if constexpr (std::is_same_v<E, probe::ProgressEvent>) events.last_progress = e;
        else if constexpr (std::is_same_v<E, probe::ResultEvent>) events.result = std::move(e.result);
        else if constexpr (std::is_same_v<E, probe::ErrorEvent>) events.error = std::move(e);
        else if constexpr (std::is_same_v<E, probe::DoneEvent>) events.done = true;
      },
      std::move(*read.event));
  return read.name;
}

const std::vector<std::string>& memory_categories() {
  static const std::vector<std::string> kCategories = {"weights", "gradients", "optimizer", "activations",
                                                       "buffers", "reserve", "total"};
  return kCategories;
}

std::map<std::string, std::int64_t> measured_memory(const probe::ProbeResult& result) {
  std::map<std::string, std::int64_t> out;
  for (const auto& c : memory_categories()) out[c] = 0;
  auto largest = [&](const std::string& category, double bytes) {
    out[category] = std::max(out[category], static_cast<std::int64_t>(bytes));
  };
  for (const auto& rank : result.memory) {
    largest("weights", rank.peak.weights_bytes);
    largest("gradients", rank.peak.gradients_bytes);
    largest("optimizer", rank.peak.optimizer_bytes);
    largest("activations", rank.peak.activations_bytes);
    largest("buffers", rank.peak.buffers_bytes);
    largest("reserve", rank.peak.reserve_bytes);
    largest("total", rank.peak_total_bytes);
  }
  return out;
}

store::RunSummary summary_of(const probe::ProbeResult& result, const probe::ProbeRequest& request) {
  store::RunSummary s;
  for (const auto& step : result.steps) s.loss_per_step.push_back(step.loss);
  // Stopped before the timed steps: every step made counts.
  if (const double step = probe::step_seconds(result); step > 0) s.step_time_s = step;
  s.memory_bytes = measured_memory(result);
  const auto& l = request.layout;
  const double world = static_cast<double>(l.tp * l.pp * std::max<std::int64_t>(l.dp, 1));
  const double tokens = static_cast<double>(request.global_batch) * static_cast<double>(request.seq_len);
  s.metrics["world_size"] = world;
  s.metrics["steps"] = static_cast<double>(s.loss_per_step.size());
  s.metrics["stopped_early"] = result.stopped_early ? 1.0 : 0.0;
  if (s.step_time_s && *s.step_time_s > 0) s.metrics["tokens_per_s"] = tokens / *s.step_time_s;
  if (result.device_report.is_object() && !result.device_report.empty()) {
    s.device = result.device_report;
    // The step's tensor-core share is also a metric, so runs can be compared by it.
    const auto step = result.device_report.value("tensor_cores", nlohmann::json::object()).value("step", nlohmann::json::object());
    if (auto share = step.find("share"); share != step.end() && share->is_number()) {
      s.metrics["tensor_core_share"] = share->get<double>();
    }
  }
  return s;
}

}  // namespace plansight::core
