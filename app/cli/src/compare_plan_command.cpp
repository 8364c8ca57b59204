// `plansight compare RUN --plan FILE.json`: time per phase of the plan's predicted iteration
// against the run's imported or measured timeline (and memory when the run measured it), as a
// table or --json. error = predicted / measured - 1.
#include "compare_plan_command.h"

#include <cmath>

#include "command_util.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/cli/plan_run_comparison.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

nlohmann::json error_json(const ComparedValue& r) {
  auto e = r.error();
  return e ? nlohmann::json(*e) : nlohmann::json();
}

std::string error_text(const ComparedValue& r) {
  auto e = r.error();
  if (!e) return "-";
  std::string text = *e >= 0 ? "+" : "";
  text += format_fixed(*e * 100, 1);
  text += "%";
  return text;
}

void print_table(std::ostream& out, const PlanRunComparison& c) {
  const auto& p = c.plan;
  out << "run " << c.run.id << ": " << c.run.name << " (" << est::to_string(c.measured_source) << " timeline)\n";
  out << "plan: " << p.model.name << " on " << p.cluster.gpus << " x " << p.cluster.gpu.name << ", tp " << p.layout.tp
      << " pp " << p.layout.pp << " dp " << c.estimate.dp << ", " << est::to_string(p.layout.schedule) << "\n\n";
  out << pad_right("time", 16) << pad_left("predicted", 12) << pad_left("measured", 12) << pad_left("error", 10) << "\n";
  for (const auto& r : c.phases) {
    out << pad_right(r.name, 16) << pad_left(format_seconds(r.predicted), 12)
        << pad_left(r.has_measured ? format_seconds(r.measured) : "-", 12) << pad_left(error_text(r), 10) << "\n";
  }
  out << "(phases: each timeline averaged over its ranks; the measured one spans " << format_seconds(c.measured_phases.step_s)
      << " and its bubble includes " << format_seconds(c.measured_phases.waiting_s)
      << " waiting inside communication calls; step: "
      << (c.measured_step_is_median ? "the run's median step" : "the traced window") << ")\n";
  if (c.memory.empty()) return;
  out << "\n" << pad_right("memory", 16) << pad_left("predicted", 12) << pad_left("measured", 12) << pad_left("error", 10) << "\n";
  for (const auto& r : c.memory) {
    out << pad_right(r.name, 16) << pad_left(format_fixed(r.predicted / (1 << 20), 2) + " MiB", 12)
        << pad_left(format_fixed(r.measured / (1 << 20), 2) + " MiB", 12) << pad_left(error_text(r), 10) << "\n";
  }
}

nlohmann::json to_json(const PlanRunComparison& c) {
  nlohmann::json j;
  j["run_id"] = c.run.id;
  j["run_name"] = c.run.name;
  j["measured_source"] = std::string(est::to_string(c.measured_source));
  const ComparedValue& step = c.phases.back();
  j["step"] = {{"predicted_s", step.predicted}, {"measured_s", step.measured}, {"error", error_json(step)},
               {"measured_is_median", c.measured_step_is_median}};
  j["phases"] = nlohmann::json::array();
  for (const auto& r : c.phases) {
    if (r.name == "step") continue;
    j["phases"].push_back({{"phase", r.name}, {"predicted_s", r.predicted}, {"measured_s", r.measured}, {"error", error_json(r)}});
  }
  j["predicted_window_s"] = c.predicted_phases.step_s;
  j["traced_window_s"] = c.measured_phases.step_s;
  j["measured_waiting_s"] = c.measured_phases.waiting_s;  // part of the measured bubble
  j["memory"] = nlohmann::json::array();
  for (const auto& r : c.memory) {
    j["memory"].push_back({{"category", r.name}, {"predicted_bytes", r.predicted}, {"measured_bytes", r.measured},
                           {"error", error_json(r)}});
  }
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
  auto db = open_run_store(args);
  if (!db) return report_command_errors(db.errors(), json, out, err, Status::failure);
  auto comparison = compare_run_with_plan(*db, run_id, *plan);
  if (!comparison) return report_command_errors(comparison.errors(), json, out, err);
  if (json) out << json_text(to_json(*comparison)) << "\n";
  else print_table(out, *comparison);
  return Status::ok;
}

}  // namespace plansight::cli
