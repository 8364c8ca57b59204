// Two plans side by side: which fields differ (leaf by leaf of their plan-file JSON) and what
// that does to every number the estimate answers — memory per GPU by component, the iteration's
// time breakdown, MFU, throughput, days, GPU-hours and cost. For `plansight diff A.json B.json`
// and the app's plan comparison.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct PlanFieldChange {
  std::string path;  // "layout.zero_stage", "model.hidden"
  nlohmann::json a, b;  // null where one plan lacks the field
};
// In the order of the plan-file JSON; a changed model or GPU preset shows as its fields.
std::vector<PlanFieldChange> plan_field_changes(const Plan& a, const Plan& b);

struct PlanQuantity {
  std::string group;  // "memory per GPU", "time per iteration", "training"
  std::string name;
  std::string unit;
  double a = 0, b = 0;
  bool available = true;  // false when either estimate lacks it (no time estimate)
  double delta() const { return b - a; }
  double ratio() const;   // b / a; NaN when a is 0
};
std::vector<PlanQuantity> compare_estimates(const Estimate& a, const Estimate& b);

}  // namespace plansight::estimator
