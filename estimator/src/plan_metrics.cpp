// plan_metrics.h: each metric is a plain read of the Estimate, in the unit its entry states.
#include "plansight/estimator/plan_metrics.h"

#include <string>

namespace plansight::estimator {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double model_states(const MemoryBreakdown& m) { return m.weights_bytes + m.gradients_bytes + m.optimizer_bytes; }

}  // namespace

const std::vector<MetricInfo>& plan_metrics() {
  static const std::vector<MetricInfo> metrics = {
      {"memory_gib", "GiB", "total memory of the most loaded GPU"},
      {"model_states_gib_per_1e9_parameters", "GiB",
       "weights + gradients + optimizer states of the most loaded GPU, per 1e9 of the parameters it holds"},
      {"model_states_gb", "GB", "weights + gradients + optimizer states of the most loaded GPU, decimal GB"},
      {"weights_gib", "GiB", "weights of the most loaded GPU"},
      {"activations_gib", "GiB", "activations of the most loaded GPU at their peak"},
      {"iteration_s", "s", "time of one iteration", true},
      {"training_days", "days", "days to train the plan's tokens", true},
      {"training_weeks", "weeks", "weeks to train the plan's tokens (days / 7)", true},
      {"cost", "", "cost of training the plan's tokens, in the price's currency", true},
      {"mfu", "", "model FLOPs utilisation, 0..1", true},
      {"tokens_per_s", "tokens/s", "tokens per second of the whole cluster", true},
      {"bubble_fraction", "", "pipeline bubble / pipeline work, mean over stages (schedule_metrics.h)", true},
      {"bubble_fraction_max", "", "pipeline bubble / pipeline work of the worst stage (schedule_metrics.h)", true},
      {"achieved_tflops_per_gpu", "TFLOP/s", "FLOPs run per second per GPU, recomputation included (Narayanan et al. 2021's measure)", true},
  };
  return metrics;
}

const MetricInfo* find_plan_metric(std::string_view name) {
  for (const auto& m : plan_metrics()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

Result<double> plan_metric(std::string_view metric, const Plan& plan, const Estimate& e) {
  (void)plan;
  const MetricInfo* info = find_plan_metric(metric);
  if (!info) {
    std::string valid;
    for (const auto& m : plan_metrics()) valid += (valid.empty() ? "" : ", ") + std::string(m.name);
    return make_error("metric", "unknown metric \"" + std::string(metric) + "\"; valid: " + valid);
  }
  if (info->needs_time && !e.time.available) {
    return make_error("metric", std::string(metric) + " needs a time estimate (give --mfu or --achieved-tflops, or a GPU the time model knows)");
  }
  if (metric == "memory_gib") return e.memory.peak.total_bytes() / kGiB;
  if (metric == "model_states_gib_per_1e9_parameters") {
    const StageMemory& s = e.memory.stages.at(static_cast<std::size_t>(e.memory.most_loaded_stage));
    if (s.parameters <= 0) return make_error("metric", "the most loaded GPU holds no parameters");
    return model_states(s.memory) / s.parameters * 1e9 / kGiB;
  }
  if (metric == "model_states_gb") return model_states(e.memory.peak) / 1e9;
  if (metric == "weights_gib") return e.memory.peak.weights_bytes / kGiB;
  if (metric == "activations_gib") return e.memory.peak.activations_bytes / kGiB;
  if (metric == "iteration_s") return e.time.iteration_s;
  if (metric == "training_days") return e.time.training_days;
  if (metric == "training_weeks") return e.time.training_days / 7.0;
  if (metric == "cost") return e.time.cost;
  if (metric == "mfu") return e.time.mfu;
  if (metric == "tokens_per_s") return e.time.tokens_per_s;
  if (metric == "bubble_fraction") return e.time.bubble_fraction;
  if (metric == "bubble_fraction_max") return e.time.bubble_fraction_max;
  return e.time.achieved_tflops_per_gpu;  // the last entry
}

}  // namespace plansight::estimator
