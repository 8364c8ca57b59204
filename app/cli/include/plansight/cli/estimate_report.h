// Human-readable estimate report.
#pragma once

#include <ostream>

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::cli {

void print_estimate(std::ostream& out, const estimator::Plan& plan, const estimator::Estimate& estimate);

}  // namespace plansight::cli
