// `plansight diff A.json B.json` (plan_diff_command.cpp), reached from `diff` when both
// arguments are .json files.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "plansight/cli/commands.h"

namespace plansight::cli {

bool looks_like_plan_files(const std::vector<std::string>& positionals);
Status run_plan_diff(const std::vector<std::string>& files, bool json, std::ostream& out, std::ostream& err);

}  // namespace plansight::cli
