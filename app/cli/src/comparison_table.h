// The predicted-vs-measured tables of `plansight compare` (a probe run against its own
// configuration, or any run against a plan): one layout for both, so they read alike.
#pragma once

#include <ostream>
#include <vector>

#include "plansight/core/operator_comparison.h"
#include "plansight/core/plan_run_comparison.h"

namespace plansight::cli {

// time | predicted | measured | error | of step, one row per phase, then the step.
void print_phase_table(std::ostream& out, const std::vector<core::ComparedValue>& phases, const core::ComparedValue& step);
// operator | phase | predicted | measured | error | calls, one row per operator and phase of a
// probe run (core::compare_operators), then what the rows leave out.
void print_operator_table(std::ostream& out, const core::OperatorComparisons& operators);
// memory | predicted | measured | error, in MiB.
void print_memory_table(std::ostream& out, const std::vector<core::ComparedValue>& memory);

}  // namespace plansight::cli
