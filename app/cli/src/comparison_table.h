// The predicted-vs-measured tables of `plansight compare` (a probe run against its own
// configuration, or any run against a plan): one layout for both, so they read alike.
#pragma once

#include <ostream>
#include <vector>

#include "plansight/core/plan_run_comparison.h"

namespace plansight::cli {

// time | predicted | measured | error | of step, one row per phase, then the step.
void print_phase_table(std::ostream& out, const std::vector<core::ComparedValue>& phases, const core::ComparedValue& step);
// memory | predicted | measured | error, in MiB.
void print_memory_table(std::ostream& out, const std::vector<core::ComparedValue>& memory);

}  // namespace plansight::cli
