// `plansight compare RUN`: the estimator's prediction for a stored probe run's exact
// configuration, with the run's own hardware profile, against what the run measured: step time,
// time per phase (step_phases() on both timelines) and memory per category. With a plan (--plan
// FILE and/or the plan flags of estimate) it compares any measured or imported run with that plan
// instead (compare_plan_command.cpp).
// error = predicted / measured - 1, so +0.10 means the estimator said 10% more than was measured.
// On the CPU, time a rank spends inside a communication call before its last peer arrived is
// idle (waiting), not communication; see step_phases.h.
#include <cmath>

#include "command_util.h"
#include "comparison_table.h"
#include "compare_plan_command.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/core/operator_comparison.h"
#include "plansight/core/plan_run_comparison.h"
#include "plansight/core/probe_events.h"
#include "plansight/core/probe_plan.h"
#include "plansight/core/run_throughput.h"
#include "plansight/cli/run_args.h"
#include "plansight/core/step_phases.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/time_model.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

nlohmann::json fraction_json(std::optional<double> f) { return f ? nlohmann::json(*f) : nlohmann::json(); }

}  // namespace

Status run_compare(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (const auto& a : argv) json = json || a == "--json";
  auto args = Args::parse(argv, plan_command_flags({{"--db", true, "PATH"}, {"--operators", false, ""}}));
  if (!args) return report_command_errors(args.errors(), json, out, err);
  if (args->positionals().size() != 1) {
    return report_command_errors({make_error("run id", "give exactly one run id (see plansight runs)")}, json, out, err);
  }
  auto id = parse_run_id(args->positionals()[0], "run id");
  if (!id) return report_command_errors(id.errors(), json, out, err);
  // Any plan flag names the plan to compare with (any measured or imported run); without one, a
  // probe run is compared with the prediction of its own configuration.
  if (has_plan_flags(*args)) return run_compare_with_plan(*id, *args, out, err);
  auto db = open_run_store(*args, store::Access::read_only);
  if (!db) return report_command_errors(db.errors(), json, out, err, Status::failure);
  auto run = db->get_run(*id);
  if (!run) return report_command_errors(run.errors(), json, out, err);
  if (run->kind != store::RunKind::probe || !run->plan || !run->summary || !run->summary->step_time_s) {
    const std::string run_id = std::to_string(*id);
    return report_command_errors({make_error("run " + run_id, "is not a finished probe run; to set it beside a plan's prediction: "
                                                              "plansight compare " + run_id + " --plan FILE.json (or plan flags)")},
                                 json, out, err);
  }
  auto profile = core::hardware_profile_of_run(*db, *run);
  if (!profile) return report_command_errors(profile.errors(), json, out, err, Status::failure);
  auto plan = core::plan_of_probe_run(*run->plan, *profile, core::launched_processes(run->summary->device));
  if (!plan) return report_command_errors(plan.errors(), json, out, err, Status::failure);
  // One simulation of the run's plan gives the estimate (its memory) and the predicted timeline.
  est::TimePrediction prediction;
  auto estimate = est::estimate_with_prediction(*plan, &*profile, prediction);
  if (!estimate) return report_command_errors(estimate.errors(), json, out, err, Status::failure);
  auto measured_timeline = db->load_timeline(*id, est::TimelineSource::measured);

  // Time: the step from the run's median, the phases from its traced step.
  const std::int64_t shared = core::shared_processors_of(*plan, measured_timeline ? &*measured_timeline : nullptr);
  const core::StepPhases p = core::step_phases(prediction.timeline, shared, core::ranks_per_stage(*plan));
  const core::StepPhases m = measured_timeline ? core::step_phases(*measured_timeline, shared) : core::StepPhases{};
  const bool has_phases = measured_timeline.ok();
  std::vector<core::ComparedValue> phases = core::phase_rows(p, m, has_phases, prediction.iteration_s, *run->summary->step_time_s);
  const core::ComparedValue step = phases.back();
  phases.pop_back();
  // Memory: per category the largest over pipeline stages (predicted) and over ranks (measured).
  const std::vector<core::ComparedValue> memory = core::memory_rows(estimate->memory, run->summary->memory_bytes);
  // Throughput: tokens/s, and MFU against the GPU's datasheet peak (none on a CPU).
  // Per operator (--operators): the operator model's costs beside the probe's spans of each.
  const bool by_operator = args->has("--operators") && has_phases;
  const core::OperatorComparisons operators =
      by_operator ? core::compare_operators(*plan, &*profile, estimate->padded_vocab, *measured_timeline) : core::OperatorComparisons{};
  const core::RunThroughput throughput =
      core::run_throughput(*plan, *estimate, step.predicted, step.measured, plan->cluster.gpu.name);
  const auto optional_json = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };

  if (json) {
    nlohmann::json j;
    j["run_id"] = *id;
    j["device"] = run->device;
    j["step"] = {{"predicted_s", step.predicted}, {"measured_s", step.measured}, {"error", fraction_json(step.error())}};
    j["phases"] = nlohmann::json::array();
    for (const auto& r : phases) {
      j["phases"].push_back({{"phase", r.name}, {"predicted_s", r.predicted},
                             {"measured_s", r.has_measured ? nlohmann::json(r.measured) : nlohmann::json()},
                             {"error", fraction_json(r.error())}, {"error_of_step", fraction_json(r.of_step())},
                             {"small", r.small()}});
    }
    j["traced_step_s"] = has_phases ? nlohmann::json(m.step_s) : nlohmann::json();
    j["phases_shared_processors"] = shared;  // > 0: phases are processor time (step_phases.h)
    j["measured_waiting_s"] = has_phases ? nlohmann::json(m.waiting_s) : nlohmann::json();  // part of the idle time
    if (by_operator) {
      j["operators"] = nlohmann::json::array();
      for (const auto& r : operators.rows) {
        j["operators"].push_back({{"operator", r.probe_name}, {"model_operators", r.operators},
                                  {"phase", std::string(est::to_string(r.phase))}, {"predicted_s", r.predicted_s},
                                  {"measured_s", r.measured_s}, {"measured_calls", r.measured_calls}});
      }
      j["operators_unmatched_measured_s"] = operators.unmatched_measured_s;
      j["operators_measured_cpu_time"] = operators.measured_cpu_time;
      j["operators_measured_device_work"] = operators.measured_device_work;
    }
    j["memory"] = nlohmann::json::array();
    for (const auto& r : memory) {
      j["memory"].push_back({{"category", r.name}, {"predicted_bytes", r.predicted}, {"measured_bytes", r.measured},
                             {"error", fraction_json(r.error())}});
    }
    j["throughput"] = {{"predicted_tokens_per_s", throughput.predicted_tokens_per_s},
                       {"measured_tokens_per_s", throughput.measured_tokens_per_s},
                       {"predicted_mfu", optional_json(throughput.predicted_mfu)},
                       {"measured_mfu", optional_json(throughput.measured_mfu)},
                       {"peak_flops_per_gpu", throughput.peak_flops_per_gpu},
                       {"gpus", throughput.gpus},
                       {"peak_source", throughput.peak_source},
                       {"mfu_note", throughput.mfu_note}};
    j["plan"] = est::to_json(*plan);
    out << json_text(j) << "\n";
    return Status::ok;
  }
  out << "run " << *id << ": " << run->name << " on " << run->device << "\n\n";
  print_phase_table(out, phases, step);
  if (has_phases && shared > 0) {
    out << "(phases: the traced step, " << format_seconds(m.step_s) << ". " << core::shared_phases_note(shared, *plan)
        << " Step: the run's median.)\n";
  } else if (has_phases) {
    out << "(phases: the traced step, " << format_seconds(m.step_s) << ", averaged over ranks; its idle time includes "
        << format_seconds(m.waiting_s) << " waiting inside communication calls for a peer; step: the run's median)\n";
  }
  out << core::comparison_legend() << "\n";
  if (by_operator) {
    if (!operators.matched()) {
      out << "\n(no per-operator comparison: none of this run's spans is one of the probe's operators; a GPU run traced "
             "before its kernels kept the operator that launched them has none)\n";
    } else {
      print_operator_table(out, operators);
    }
  }
  print_memory_table(out, memory);
  out << "\nthroughput         predicted    measured\n";
  out << "tokens/s     " << pad_left(format_fixed(throughput.predicted_tokens_per_s, 0), 15)
      << pad_left(format_fixed(throughput.measured_tokens_per_s, 0), 12) << "\n";
  if (throughput.measured_mfu && throughput.predicted_mfu) {
    out << "MFU          " << pad_left(format_fixed(*throughput.predicted_mfu * 100, 1) + "%", 15)
        << pad_left(format_fixed(*throughput.measured_mfu * 100, 1) + "%", 12) << "   (model FLOPs over the "
        << throughput.peak_source << ")\n";
  } else {
    out << "(" << throughput.mfu_note << ")\n";
  }
  return Status::ok;
}

}  // namespace plansight::cli
