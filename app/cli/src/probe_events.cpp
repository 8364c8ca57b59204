// Reading plansight-probe's JSON lines. Lenient about what it does not know (new event kinds
// and keys are skipped, so an older app reads a newer probe) and strict about nothing: a line
// that is not JSON is kept for the error message instead of failing the run.
#include "plansight/cli/probe_events.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace plansight::cli {
namespace {

double number_at(const nlohmann::json& j, const char* key, double fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// The stored loss keeps a diverged step as NaN (written null on the wire).
double loss_of(const nlohmann::json& step) {
  auto it = step.find("loss");
  return it != step.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::string accept_probe_line(ProbeEvents& events, std::string_view line) {
  if (line.empty()) return "";
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("event") || !j["event"].is_string()) {
    events.stray_lines.emplace_back(line);
    return "";
  }
  const std::string kind = j["event"].get<std::string>();
  if (kind == "started") {
    events.started = j;
  } else if (kind == "progress") {
    ProbeProgress p;
    p.step = static_cast<std::int64_t>(number_at(j, "step"));
    p.steps = static_cast<std::int64_t>(number_at(j, "steps"));
    p.loss = number_at(j, "loss", std::numeric_limits<double>::quiet_NaN());
    p.elapsed_s = number_at(j, "elapsed_s");
    p.eta_s = number_at(j, "eta_s");
    events.last_progress = p;
  } else if (kind == "result") {
    j.erase("event");
    events.result = std::move(j);
  } else if (kind == "error") {
    for (const auto& e : j.value("errors", nlohmann::json::array())) {
      if (!e.is_object()) continue;
      events.errors.push_back(make_error(e.value("field", std::string("probe")), e.value("message", std::string())));
    }
  } else if (kind == "done") {
    events.done = true;
  }
  return kind;
}

const std::vector<std::string>& memory_categories() {
  static const std::vector<std::string> kCategories = {"weights", "gradients", "optimizer", "activations",
                                                       "buffers", "reserve", "total"};
  return kCategories;
}

std::map<std::string, std::int64_t> measured_memory(const nlohmann::json& result) {
  std::map<std::string, std::int64_t> out;
  for (const auto& c : memory_categories()) out[c] = 0;
  for (const auto& rank : result.value("memory", nlohmann::json::array())) {
    const auto peak = rank.value("peak", nlohmann::json::object());
    for (const auto& c : memory_categories()) {
      if (c == "total") continue;
      out[c] = std::max(out[c], static_cast<std::int64_t>(number_at(peak, (c + "_bytes").c_str())));
    }
    out["total"] = std::max(out["total"], static_cast<std::int64_t>(number_at(rank, "peak_total_bytes")));
  }
  return out;
}

store::RunSummary summary_of(const nlohmann::json& result, const nlohmann::json& request) {
  store::RunSummary s;
  std::vector<double> seconds;
  for (const auto& step : result.value("steps", nlohmann::json::array())) {
    s.loss_per_step.push_back(loss_of(step));
    seconds.push_back(number_at(step, "seconds"));
  }
  const double step_time = number_at(result, "step_time_s");
  if (step_time > 0) {
    s.step_time_s = step_time;
  } else if (!seconds.empty()) {
    s.step_time_s = median_of(seconds);  // stopped before the timed steps: every step counts
  }
  s.memory_bytes = measured_memory(result);
  const auto layout = request.value("layout", nlohmann::json::object());
  const double world = number_at(layout, "tp", 1) * number_at(layout, "pp", 1) * number_at(layout, "dp", 1);
  const double tokens = number_at(request, "global_batch") * number_at(request, "seq_len");
  s.metrics["world_size"] = world;
  s.metrics["steps"] = static_cast<double>(s.loss_per_step.size());
  s.metrics["stopped_early"] = result.value("stopped_early", false) ? 1.0 : 0.0;
  if (s.step_time_s && *s.step_time_s > 0) s.metrics["tokens_per_s"] = tokens / *s.step_time_s;
  if (auto it = result.find("device_report"); it != result.end() && it->is_object()) {
    s.device = *it;
    // The step's tensor-core share is also a metric, so runs can be compared by it.
    const auto step = it->value("tensor_cores", nlohmann::json::object()).value("step", nlohmann::json::object());
    if (auto share = step.find("share"); share != step.end() && share->is_number()) {
      s.metrics["tensor_core_share"] = share->get<double>();
    }
  }
  return s;
}

}  // namespace plansight::cli
