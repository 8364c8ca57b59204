// The plan flags shared by every command that takes a plan (estimate, timeline, search,
// compare RUN): --plan FILE, --model ..., layout and training flags, and --json. They become a
// JSON overlay read by plan_from_json, so a plan file and flags mean exactly the same thing.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/cli/args.h"
#include "plansight/estimator/plan.h"

namespace plansight::cli {

const std::vector<FlagSpec>& plan_flags();

// The one flag table of the commands that take a plan: plan_flags(), --json, then the
// command's own `extra` flags. Every such command parses with it, so none rejects a flag
// another accepts.
std::vector<FlagSpec> plan_command_flags(std::vector<FlagSpec> extra = {});

// Whether any plan flag (beyond --json) was given.
bool has_plan_flags(const Args& args);

// The overlay the flags describe (with --plan's file as its base): each flag sets its field of
// the plan file (estimator/plan_fields.h). Errors name the flag. What the estimator then sets on
// the user's behalf (--vpp 2 implies the interleaved schedule) is plan_from_json's to report.
Result<nlohmann::json> plan_overlay(const Args& args);

// plan_overlay, then plan_from_json; both report their adjustments (estimator/json_io.h).
Result<estimator::Plan> plan_from_args(const Args& args, std::vector<Diagnostic>* adjustments = nullptr);

// Every field changed on the user's behalf, one "note: FIELD: ..." line each on `err`, so that
// no flag silently changes another field.
void print_adjustments(const std::vector<Diagnostic>& adjustments, std::ostream& err);

// Reads a whole file; the error names `field` and the path.
Result<std::string> read_text_file(const std::string& path, const std::string& field);

}  // namespace plansight::cli
