// Validation rules of offloading (layout.offload_*) against the ZeRO stage and the host side of
// the cluster. Each rule appends a Diagnostic naming the field, the value and what is valid.
#pragma once

#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

void validate_offload(const Plan& plan, std::vector<Diagnostic>& out);

}  // namespace plansight::estimator
