// estimate(): the estimator's front door. Validates, then computes parameters, memory, FLOPs
// and (when a throughput is given) time and cost.
#pragma once

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct HardwareProfile;
struct TimePrediction;

Result<Estimate> estimate(const Plan& plan);
// With efficiencies measured on the machine (the probe's calibration) instead of the defaults.
Result<Estimate> estimate(const Plan& plan, const HardwareProfile* profile);

struct EstimateOptions {
  const HardwareProfile* profile = nullptr;
  // When the time is predicted (no throughput given) and this is set, it receives predict_time's
  // result with its timeline, so that a caller showing the timeline (the app) does not simulate
  // the iteration a second time. Left untouched otherwise.
  TimePrediction* prediction = nullptr;
  // Above this many schedule ops (pp x vpp x micro-batches x 2, or x 3 with W ops) the time comes
  // from the closed form instead of the simulation, with a warning (TimeEstimate::simulated):
  // a bound on the time one estimate takes, for callers that run many (the search's re-ranking).
  // 0: no bound.
  std::int64_t max_simulated_ops = 0;
  // TimeModelOptions::parallel_simulations.
  bool parallel_simulations = true;
};
Result<Estimate> estimate(const Plan& plan, const EstimateOptions& options);

// estimate() and the time model's prediction of the plan with its timeline, the iteration
// simulated once: what every view that shows the predicted timeline beside the estimate needs
// (the compare pages and commands, the timeline command). With a throughput given
// (training.achieved_tflops or mfu) the estimate's time is that throughput's and `prediction`
// is still the time model's. `prediction` is written only on success.
Result<Estimate> estimate_with_prediction(const Plan& plan, const HardwareProfile* profile, TimePrediction& prediction);

}  // namespace plansight::estimator
