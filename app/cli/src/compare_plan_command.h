// `plansight compare RUN --plan FILE.json`: the plan's prediction against a measured or imported
// run (plan_run_comparison.h); compare_command.cpp hands over when --plan is given.
#pragma once

#include <cstdint>
#include <ostream>

#include "plansight/cli/args.h"
#include "plansight/cli/commands.h"

namespace plansight::cli {

Status run_compare_with_plan(std::int64_t run_id, const Args& args, std::ostream& out, std::ostream& err);

}  // namespace plansight::cli
