// plan_diff.h: the field changes walk both plans' JSON together; the quantities read the two
// estimates in the units the reports use (GiB = 2^30 bytes).
#include "plansight/estimator/plan_diff.h"

#include <cmath>
#include <limits>

#include "plansight/estimator/json_io.h"

namespace plansight::estimator {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void walk(const std::string& path, const nlohmann::json& a, const nlohmann::json& b, std::vector<PlanFieldChange>& out) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      walk(path.empty() ? key : path + "." + key, value, b.contains(key) ? b[key] : nlohmann::json(), out);
    }
    for (const auto& [key, value] : b.items()) {
      if (!a.contains(key)) out.push_back({path.empty() ? key : path + "." + key, nullptr, value});
    }
    return;
  }
  if (a != b) out.push_back({path, a, b});
}

}  // namespace

double PlanQuantity::ratio() const { return a != 0 ? b / a : std::numeric_limits<double>::quiet_NaN(); }

std::vector<PlanFieldChange> plan_field_changes(const Plan& a, const Plan& b) {
  std::vector<PlanFieldChange> out;
  walk("", to_json(a), to_json(b), out);
  return out;
}

std::vector<PlanQuantity> compare_estimates(const Estimate& a, const Estimate& b) {
  std::vector<PlanQuantity> out;
  auto add = [&](const char* group, const char* name, const char* unit, double x, double y, bool available = true) {
    out.push_back({group, name, unit, x, y, available});
  };
  const MemoryBreakdown &ma = a.memory.peak, &mb = b.memory.peak;
  add("model", "parameters", "B", a.parameters / 1e9, b.parameters / 1e9);
  add("memory per GPU", "weights", "GiB", ma.weights_bytes / kGiB, mb.weights_bytes / kGiB);
  add("memory per GPU", "gradients", "GiB", ma.gradients_bytes / kGiB, mb.gradients_bytes / kGiB);
  add("memory per GPU", "optimizer states", "GiB", ma.optimizer_bytes / kGiB, mb.optimizer_bytes / kGiB);
  add("memory per GPU", "activations", "GiB", ma.activations_bytes / kGiB, mb.activations_bytes / kGiB);
  add("memory per GPU", "buffers", "GiB", ma.buffers_bytes / kGiB, mb.buffers_bytes / kGiB);
  add("memory per GPU", "reserve", "GiB", ma.reserve_bytes / kGiB, mb.reserve_bytes / kGiB);
  add("memory per GPU", "total", "GiB", ma.total_bytes() / kGiB, mb.total_bytes() / kGiB);
  add("memory per GPU", "capacity", "GiB", a.memory.capacity_bytes / kGiB, b.memory.capacity_bytes / kGiB);
  const bool time = a.time.available && b.time.available;
  const bool predicted = time && a.time.predicted && b.time.predicted;
  // The simulation's parts are differences of event times: a part that is zero in exact
  // arithmetic can come out as 1e-11 s. Under a nanosecond is shown as the zero it is.
  auto ns_floor = [](TimeBreakdown t) {
    for (double* part : {&t.compute_s, &t.tp_comm_s, &t.cp_comm_s, &t.pp_comm_s, &t.dp_comm_s, &t.bubble_s, &t.optimizer_s}) {
      if (std::abs(*part) < 1e-9) *part = 0;
    }
    return t;
  };
  const TimeBreakdown ta = ns_floor(a.time.breakdown), tb = ns_floor(b.time.breakdown);
  add("time per iteration", "compute", "s", ta.compute_s, tb.compute_s, predicted);
  add("time per iteration", "TP communication", "s", ta.tp_comm_s, tb.tp_comm_s, predicted);
  add("time per iteration", "CP communication", "s", ta.cp_comm_s, tb.cp_comm_s, predicted);
  add("time per iteration", "PP communication", "s", ta.pp_comm_s, tb.pp_comm_s, predicted);
  add("time per iteration", "DP communication", "s", ta.dp_comm_s, tb.dp_comm_s, predicted);
  add("time per iteration", "pipeline bubble", "s", ta.bubble_s, tb.bubble_s, predicted);
  add("time per iteration", "optimizer", "s", ta.optimizer_s, tb.optimizer_s, predicted);
  add("time per iteration", "iteration", "s", a.time.iteration_s, b.time.iteration_s, time);
  add("training", "MFU", "", a.time.mfu, b.time.mfu, time);
  add("training", "tokens/s", "", a.time.tokens_per_s, b.time.tokens_per_s, time);
  add("training", "days", "", a.time.training_days, b.time.training_days, time);
  add("training", "GPU-hours", "", a.time.gpu_hours, b.time.gpu_hours, time);
  add("training", "cost", "", a.time.cost, b.time.cost, time);
  return out;
}

}  // namespace plansight::estimator
