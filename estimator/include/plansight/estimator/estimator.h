// estimate(): the estimator's front door. Validates, then computes parameters, memory, FLOPs
// and (when a throughput is given) time and cost.
#pragma once

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

Result<Estimate> estimate(const Plan& plan);

}  // namespace plansight::estimator
