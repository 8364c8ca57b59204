// `plansight compare RUN --plan FILE.json`: time per phase of the plan's predicted iteration
// against the run's imported or measured timeline (and memory when the run measured it), as a
// table or --json (comparison_legend() says what each column and phase means), with a warning
// when the run and the plan describe different jobs.
#include "compare_plan_command.h"

#include <cmath>

#include "command_util.h"
#include "comparison_table.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/core/plan_run_comparison.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

nlohmann::json fraction_json(std::optional<double> f) { return f ? nlohmann::json(*f) : nlohmann::json(); }

void print_table(std::ostream& out, const core::PlanRunComparison& c) {
  const auto& p = c.plan;
  out << "run " << c.run.id << ": " << c.run.name << " (" << est::to_string(c.measured_source) << " timeline)\n";
  out << "plan: " << p.model.name << " on " << p.cluster.gpus << " x " << p.cluster.gpu.name << ", tp " << p.layout.tp
      << " pp " << p.layout.pp << " dp " << c.estimate.dp << ", " << est::to_string(p.layout.schedule) << "\n\n";
  std::vector<core::ComparedValue> phases(c.phases.begin(), c.phases.end() - 1);
  print_phase_table(out, phases, c.phases.back());
  out << "(phases: each timeline averaged over its ranks; the measured one spans " << format_seconds(c.measured_phases.step_s)
      << " and its idle time includes " << format_seconds(c.measured_phases.waiting_s)
      << " waiting inside communication calls; step: "
      << (c.measured_step_is_median ? "the run's median step" : "the traced window") << ")\n";
  out << core::comparison_legend() << "\n";
  print_memory_table(out, c.memory);
}

nlohmann::json to_json(const core::PlanRunComparison& c) {
  nlohmann::json j;
  j["run_id"] = c.run.id;
  j["run_name"] = c.run.name;
  j["measured_source"] = std::string(est::to_string(c.measured_source));
  const core::ComparedValue& step = c.phases.back();
  j["step"] = {{"predicted_s", step.predicted}, {"measured_s", step.measured}, {"error", fraction_json(step.error())},
               {"measured_is_median", c.measured_step_is_median}};
  j["phases"] = nlohmann::json::array();
  for (const auto& r : c.phases) {
    if (r.name == "step") continue;
    j["phases"].push_back({{"phase", r.name}, {"predicted_s", r.predicted}, {"measured_s", r.measured},
                           {"error", fraction_json(r.error())}, {"error_of_step", fraction_json(r.of_step())},
                           {"small", r.small()}});
  }
  j["predicted_window_s"] = c.predicted_phases.step_s;
  j["traced_window_s"] = c.measured_phases.step_s;
  j["measured_waiting_s"] = c.measured_phases.waiting_s;  // part of the measured idle time
  j["memory"] = nlohmann::json::array();
  for (const auto& r : c.memory) {
    j["memory"].push_back({{"category", r.name}, {"predicted_bytes", r.predicted}, {"measured_bytes", r.measured},
                           {"error", fraction_json(r.error())}});
  }
  j["warnings"] = c.mismatches;
  j["plan"] = est::to_json(c.plan);
  return j;
}

}  // namespace

Status run_compare_with_plan(std::int64_t run_id, const Args& args, std::ostream& out, std::ostream& err) {
  const bool json = args.has("--json");
  std::vector<Diagnostic> adjustments;
  auto plan = plan_from_args(args, &adjustments);
  if (!plan) return report_command_errors(plan.errors(), json, out, err);
  print_adjustments(adjustments, err);
  auto db = open_run_store(args, store::Access::read_only);
  if (!db) return report_command_errors(db.errors(), json, out, err, Status::failure);
  auto comparison = core::compare_run_with_plan(*db, run_id, *plan);
  if (!comparison) return report_command_errors(comparison.errors(), json, out, err);
  if (json) {
    out << json_text(to_json(*comparison)) << "\n";
  } else {
    for (const auto& w : comparison->mismatches) err << "warning: " << w << "\n";
    print_table(out, *comparison);
  }
  return Status::ok;
}

}  // namespace plansight::cli
