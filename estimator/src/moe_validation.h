// Validation rules of the MoE, MLA and MTP model fields (and, with a plan, of expert
// parallelism), kept apart from plan.cpp's dense rules. Each rule appends a Diagnostic naming
// the field, the value and what would be valid.
#pragma once

#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/model_spec.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

void validate_moe_model(const ModelSpec& model, std::vector<Diagnostic>& out);
// EP/ETP against the model and the other degrees (Megatron-Core's rules, cited in the .cpp).
void validate_expert_layout(const Plan& plan, std::vector<Diagnostic>& out);

}  // namespace plansight::estimator
