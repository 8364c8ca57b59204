// Advisor: warnings a user acts on, from a plan and its estimate — shapes that starve Tensor
// Cores, TP groups spanning nodes, large pipeline bubbles, exposed data-parallel communication,
// micro-batches too small for efficient GEMMs. Each names the field to change and how.
#pragma once

#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

std::vector<Diagnostic> advise(const Plan& plan, const Estimate& estimate);

}  // namespace plansight::estimator
