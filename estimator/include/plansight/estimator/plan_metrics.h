// Named numbers of a plan's estimate, for the examples (examples.h), sweeps (sweep.h) and every
// face that lets a user pick "a metric": memory per GPU, model states, activations, days, cost,
// MFU, bubble. One definition each, with its unit.
#pragma once

#include <string_view>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct MetricInfo {
  std::string_view name, unit, description;
  bool needs_time = false;  // needs the time estimate (a predicted or given throughput)
};
const std::vector<MetricInfo>& plan_metrics();
const MetricInfo* find_plan_metric(std::string_view name);

// The metric of `estimate` (of `plan`). Unknown names are an error naming the valid ones.
Result<double> plan_metric(std::string_view metric, const Plan& plan, const Estimate& estimate);

}  // namespace plansight::estimator
