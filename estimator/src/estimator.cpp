// estimate(): validation, then parameters, memory, FLOPs, time and the plan-level warnings.
#include "plansight/estimator/estimator.h"

#include <string>

#include "plansight/estimator/advisor.h"
#include "plansight/estimator/cost.h"
#include "plansight/estimator/flops.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/time_model.h"
#include "bytes_text.h"

namespace plansight::estimator {
namespace {

std::string gib(double bytes) { return detail::gib_text(bytes); }

void memory_warnings(const Estimate& e, std::vector<Diagnostic>& out) {
  const double total = e.memory.peak.total_bytes();
  const double capacity = e.memory.capacity_bytes;
  const std::string where = "stage " + std::to_string(e.memory.most_loaded_stage);
  if (!e.memory.fits) {
    out.push_back(make_warning("memory", "does not fit: " + where + " needs " + gib(total) + " of " + gib(capacity)));
  } else if (capacity - total < 0.05 * capacity) {
    out.push_back(make_warning("memory", "headroom below 5%: " + where + " needs " + gib(total) + " of " + gib(capacity)));
  }
}

void host_memory_warnings(const Plan& plan, const Estimate& e, std::vector<Diagnostic>& out) {
  const double need = e.memory.host_bytes_per_node;
  if (need <= 0) return;
  const double have = e.memory.host_capacity_bytes;
  if (have <= 0) {
    out.push_back(make_warning("cluster.host_memory_gib", "unknown (0): offloading needs " + gib(need) +
                                                              " of host memory per node, which cannot be checked"));
  } else if (!e.memory.host_fits) {
    out.push_back(make_warning("cluster.host_memory_gib", "does not fit: offloading needs " + gib(need) +
                                                              " of host memory per node, the node has " + gib(have) +
                                                              " (" + std::to_string(plan.cluster.gpus_per_node) + " GPUs per node)"));
  }
}

}  // namespace

Result<Estimate> estimate(const Plan& plan) { return estimate(plan, nullptr); }

Result<Estimate> estimate(const Plan& plan, const HardwareProfile* profile) {
  EstimateOptions options;
  options.profile = profile;
  return estimate(plan, options);
}

Result<Estimate> estimate(const Plan& plan, const EstimateOptions& estimate_options) {
  const HardwareProfile* profile = estimate_options.profile;
  std::vector<Diagnostic> diagnostics = validate(plan);
  if (has_errors(diagnostics)) return diagnostics;

  Estimate e;
  e.warnings = std::move(diagnostics);
  e.dp = plan.dp();
  e.micro_batches = plan.micro_batches();
  e.padded_vocab = padded_vocab(plan.model.vocab, plan.layout.tp, plan.training.vocab_divisible_by);
  const ParameterCounts counts = count_parameters(plan.model, plan.model.vocab);
  e.parameters = counts.total;
  e.active_parameters = counts.active + counts.mtp_active;  // MTP modules run for every token
  e.parameters_padded = count_parameters(plan.model, e.padded_vocab).total;
  e.memory = estimate_memory(plan, e.padded_vocab);
  e.flops = iteration_flops(plan, e.padded_vocab);
  e.time = time_from_throughput(plan, e.flops);
  if (!e.time.available) {
    // No throughput given: predict it. Schedule errors were caught by validate() already.
    TimeModelOptions options;
    options.keep_timeline = estimate_options.prediction != nullptr;
    options.profile = profile;
    options.parallel_simulations = estimate_options.parallel_simulations;
    const std::int64_t ops = schedule_ops(plan);
    const bool simulate = estimate_options.max_simulated_ops <= 0 || ops <= estimate_options.max_simulated_ops;
    auto predicted = simulate ? predict_time(plan, e.padded_vocab, options)
                              : Result<TimePrediction>(predict_time_closed_form(plan, e.padded_vocab, profile));
    if (!predicted) return predicted.errors();
    if (!simulate) {
      e.warnings.push_back(make_warning(
          "time", "iteration time from the closed form, not simulated: the schedule has " + std::to_string(ops) +
                      " ops, more than the " + std::to_string(estimate_options.max_simulated_ops) +
                      " this estimate may simulate"));
    }
    e.time.iteration_s = predicted->iteration_s;
    complete_time_estimate(plan, e.flops, e.time);
    e.time.predicted = true;
    e.time.simulated = simulate;
    e.time.breakdown = predicted->breakdown;
    e.time.bubble_fraction = predicted->bubble_fraction;
    e.time.bubble_fraction_max = predicted->bubble_fraction_max;
    if (estimate_options.prediction) *estimate_options.prediction = std::move(*predicted);
  }
  memory_warnings(e, e.warnings);
  host_memory_warnings(plan, e, e.warnings);
  for (auto& advice : advise(plan, e)) e.warnings.push_back(std::move(advice));
  return e;
}

Result<Estimate> estimate_with_prediction(const Plan& plan, const HardwareProfile* profile, TimePrediction& prediction) {
  TimePrediction predicted;
  EstimateOptions options;
  options.profile = profile;
  options.prediction = &predicted;
  auto e = estimate(plan, options);
  if (!e) return e.errors();
  if (!e->time.predicted) {
    TimeModelOptions model;
    model.profile = profile;
    model.keep_timeline = true;
    auto again = predict_time(plan, e->padded_vocab, model);
    if (!again) return again.errors();
    predicted = std::move(*again);
  }
  prediction = std::move(predicted);
  return e;
}

}  // namespace plansight::estimator
