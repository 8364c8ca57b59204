// estimate(): the estimator's front door. Validates, then computes parameters, memory, FLOPs
// and (when a throughput is given) time and cost.
#pragma once

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct HardwareProfile;

Result<Estimate> estimate(const Plan& plan);
// With efficiencies measured on the machine (the probe's calibration) instead of the defaults.
Result<Estimate> estimate(const Plan& plan, const HardwareProfile* profile);

}  // namespace plansight::estimator
