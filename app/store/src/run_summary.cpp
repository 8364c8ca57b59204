// RunSummary <-> JSON. Written by the store into runs.summary_json; read back tolerantly (unknown
// keys ignored) but strictly typed: a wrong type names the field, so a damaged row is visible.
#include "plansight/store/run_summary.h"

#include <cmath>
#include <limits>

namespace plansight::store {
namespace {

bool same_double(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// JSON has no NaN or infinity; nlohmann would write them as null anyway, say so explicitly.
nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

bool read_number(const nlohmann::json& j, double& out) {
  if (j.is_null()) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (!j.is_number()) return false;
  out = j.get<double>();
  return true;
}

}  // namespace

bool RunSummary::operator==(const RunSummary& other) const {
  if (step_time_s.has_value() != other.step_time_s.has_value()) return false;
  if (step_time_s && !same_double(*step_time_s, *other.step_time_s)) return false;
  if (loss_per_step.size() != other.loss_per_step.size()) return false;
  for (std::size_t i = 0; i < loss_per_step.size(); ++i) {
    if (!same_double(loss_per_step[i], other.loss_per_step[i])) return false;
  }
  if (memory_bytes != other.memory_bytes || metrics.size() != other.metrics.size()) return false;
  for (auto a = metrics.begin(), b = other.metrics.begin(); a != metrics.end(); ++a, ++b) {
    if (a->first != b->first || !same_double(a->second, b->second)) return false;
  }
  return device == other.device;
}

nlohmann::json to_json(const RunSummary& summary) {
  nlohmann::json j = nlohmann::json::object();
  if (summary.step_time_s) j["step_time_s"] = number_or_null(*summary.step_time_s);
  auto& loss = j["loss_per_step"] = nlohmann::json::array();
  for (double v : summary.loss_per_step) loss.push_back(number_or_null(v));
  j["memory_bytes"] = summary.memory_bytes;
  auto& metrics = j["metrics"] = nlohmann::json::object();
  for (const auto& [name, v] : summary.metrics) metrics[name] = number_or_null(v);
  if (!summary.device.empty()) j["device"] = summary.device;
  return j;
}

Result<RunSummary> summary_from_json(const nlohmann::json& json) {
  if (!json.is_object())
    return make_error("summary", "expected a JSON object, got " + std::string(json.type_name()));
  RunSummary out;
  std::vector<Diagnostic> errors;
  if (auto it = json.find("step_time_s"); it != json.end()) {
    double v = 0;
    if (read_number(*it, v))
      out.step_time_s = v;
    else
      errors.push_back(make_error("summary.step_time_s", "expected seconds as a number, got " + it->dump()));
  }
  if (auto it = json.find("loss_per_step"); it != json.end()) {
    if (!it->is_array())
      errors.push_back(make_error("summary.loss_per_step", "expected an array of numbers"));
    else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        double v = 0;
        if (read_number((*it)[i], v))
          out.loss_per_step.push_back(v);
        else
          errors.push_back(make_error("summary.loss_per_step[" + std::to_string(i) + "]",
                                      "expected a number or null, got " + (*it)[i].dump()));
      }
    }
  }
  if (auto it = json.find("memory_bytes"); it != json.end()) {
    if (!it->is_object())
      errors.push_back(make_error("summary.memory_bytes", "expected an object of byte counts"));
    else {
      for (const auto& [name, v] : it->items()) {
        if (v.is_number_integer())
          out.memory_bytes[name] = v.get<std::int64_t>();
        else
          errors.push_back(
              make_error("summary.memory_bytes." + name, "expected whole bytes, got " + v.dump()));
      }
    }
  }
  if (auto it = json.find("metrics"); it != json.end()) {
    if (!it->is_object())
      errors.push_back(make_error("summary.metrics", "expected an object of numbers"));
    else {
      for (const auto& [name, v] : it->items()) {
        double x = 0;
        if (read_number(v, x))
          out.metrics[name] = x;
        else
          errors.push_back(
              make_error("summary.metrics." + name, "expected a number or null, got " + v.dump()));
      }
    }
  }
  if (auto it = json.find("device"); it != json.end()) {
    if (it->is_object())
      out.device = *it;
    else
      errors.push_back(make_error("summary.device", "expected the device's report as an object, got " +
                                                        std::string(it->type_name())));
  }
  if (!errors.empty()) return errors;
  return out;
}

}  // namespace plansight::store
