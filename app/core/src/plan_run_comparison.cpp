// compare_run_with_plan() and the row lists of every predicted-vs-measured table (see
// plan_run_comparison.h).
#include "plansight/core/plan_run_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/time_model.h"

namespace plansight::core {

namespace est = plansight::estimator;

std::optional<double> ComparedValue::error() const {
  if (!has_measured || !(measured > 0) || small()) return std::nullopt;  // nothing (sizeable) to be relative to
  const double e = predicted / measured - 1;
  return std::isfinite(e) ? std::optional<double>(e) : std::nullopt;
}

std::optional<double> ComparedValue::of_step() const {
  if (!has_measured || !(step_s > 0)) return std::nullopt;
  const double e = (predicted - measured) / step_s;
  return std::isfinite(e) ? std::optional<double>(e) : std::nullopt;
}

bool ComparedValue::small() const {
  return step_s > 0 && predicted < kSmallPhaseShare * step_s && measured < kSmallPhaseShare * step_s;
}

std::string percent_text(std::optional<double> fraction) {
  if (!fraction || !std::isfinite(*fraction)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", *fraction * 100);
  return buf;
}

std::string comparison_legend() {
  return "error = predicted / measured - 1: + the estimator predicted more than was measured, - less.\n"
         "of step = (predicted - measured) / the measured step: the phase's part in the step's error; a phase "
         "under 5% of the step on both sides shows only this (its own error would be noise-sized).\n"
         "forward, backward: compute of the micro-batches (backward with recomputation); communication: "
         "collectives and pipeline sends not hidden behind compute, from when the last peer arrived; idle: time a "
         "rank is idle inside the step (the pipeline bubble, waiting for a peer, on a CPU the host's gaps "
         "between traced operations, and on a GPU the time it waited for the host to enqueue the next kernel, "
         "which the time model does not have); optimizer: gradient clipping and the AdamW update.";
}

bool has_cpu_times(const est::Timeline& timeline) {
  for (const auto& track : timeline.tracks) {
    for (const auto& span : track.spans) {
      if (span.cpu_ns >= 0) return true;
    }
  }
  return false;
}

std::int64_t shared_processors_of(const est::Plan& plan, const est::Timeline* measured) {
  // A CPU's rank threads (a probe plan names a CPU "cpu", probe_plan.cpp) only with their CPU
  // clocks: inferred from wall time, a thread blocked in a collective would count as sharing a
  // core, and one preempted inside a span as computing.
  if (plan.cluster.gpu.name == "cpu" && (measured == nullptr || !has_cpu_times(*measured))) return 0;
  const std::int64_t shared = plan.cluster.shared_processors;
  return shared > 0 && shared < plan.cluster.gpus ? shared : 0;
}

std::int64_t ranks_per_stage(const est::Plan& plan) {
  return std::max<std::int64_t>(plan.cluster.gpus / std::max<std::int64_t>(plan.layout.pp, 1), 1);
}

std::string shared_phases_note(std::int64_t shared, const est::Plan& plan) {
  if (plan.cluster.gpu.name == "cpu") {
    return "The rank threads share " + std::string(shared == 1 ? "one core" : std::to_string(shared) + " cores") +
           ": each phase is the processor time it took over all ranks (measured: each thread's CPU clock in its "
           "spans; predicted: the model's even sharing of the cores), so the phases add up to the step on both "
           "sides; a thread blocked in a collective or waiting for a core counts as idle, not as its phase.";
  }
  return "The " + std::string(shared == 1 ? "ranks share one GPU" : "ranks share " + std::to_string(shared) + " GPUs") +
         " (virtual ranks): each phase is the GPU time it took over all ranks, so the phases add up to the step on "
         "both sides; a rank waiting while another rank's kernels run is not counted twice (the GPU runs one rank's "
         "kernel after another, the prediction shares it). Up to megabytes a collective among virtual ranks takes "
         "tens of microseconds whatever its size: mostly the ranks' threads meeting on the host and launching its "
         "copies. The prediction counts the whole call as communication; the GPU works only for the copies and "
         "reductions, so the measured communication is those, and the meeting shows as idle.";
}

std::vector<ComparedValue> phase_rows(const StepPhases& p, const StepPhases& m, bool has_measured,
                                      double predicted_step_s, double measured_step_s) {
  std::vector<ComparedValue> rows = {{"forward", p.forward_s, m.forward_s, has_measured},
                                     {"backward", p.backward_s, m.backward_s, has_measured},
                                     {"communication", p.communication_s, m.communication_s, has_measured},
                                     {"idle", p.idle_s, m.idle_s, has_measured},
                                     {"optimizer", p.optimizer_s, m.optimizer_s, has_measured}};
  if (p.other_s > 0 || m.other_s > 0) rows.push_back({"other", p.other_s, m.other_s, has_measured});
  for (auto& r : rows) r.step_s = has_measured ? m.step_s : 0;
  rows.push_back({"step", predicted_step_s, measured_step_s, true});
  return rows;
}

std::vector<ComparedValue> memory_rows(const est::MemoryEstimate& predicted,
                                       const std::map<std::string, std::int64_t>& measured_bytes) {
  using MB = est::MemoryBreakdown;
  const std::pair<const char*, double MB::*> fields[] = {
      {"weights", &MB::weights_bytes}, {"gradients", &MB::gradients_bytes}, {"optimizer", &MB::optimizer_bytes},
      {"activations", &MB::activations_bytes}, {"buffers", &MB::buffers_bytes}, {"reserve", &MB::reserve_bytes}};
  auto measured_of = [&](const std::string& c) {
    auto it = measured_bytes.find(c);
    return it == measured_bytes.end() ? 0.0 : static_cast<double>(it->second);
  };
  std::vector<ComparedValue> rows;
  for (const auto& [name, field] : fields) {
    double largest = 0;
    for (const auto& s : predicted.stages) largest = std::max(largest, s.memory.*field);
    rows.push_back({name, largest, measured_of(name), true});
  }
  double total = 0;
  for (const auto& s : predicted.stages) total = std::max(total, s.memory.total_bytes());
  rows.push_back({"total", total, measured_of("total"), true});
  return rows;
}

Result<PlanRunComparison> compare_run_with_plan(store::Store& db, std::int64_t run_id, const est::Plan& plan) {
  auto run = db.get_run(run_id);
  if (!run) return run.errors();
  PlanRunComparison out;
  bool found = false;
  for (auto source : {est::TimelineSource::imported, est::TimelineSource::measured}) {
    auto timeline = db.load_timeline(run_id, source);
    if (!timeline) continue;
    out.measured = std::move(*timeline);
    out.measured_source = source;
    found = true;
    break;
  }
  if (!found) {
    return make_error("run " + std::to_string(run_id), "(" + run->name +
                                                           ") has no measured or imported timeline; compare a probe run or an "
                                                           "imported trace with the plan");
  }
  if (auto problems = est::validate(plan); has_errors(problems)) return problems;
  if (auto too_long = est::timeline_size_errors(plan); !too_long.empty()) return too_long;
  // The estimate keeps its simulated iteration for the comparison: one simulation in all.
  est::TimePrediction predicted;
  auto estimate = est::estimate_with_prediction(plan, nullptr, predicted);
  if (!estimate) return estimate.errors();

  out.run = std::move(*run);
  out.plan = plan;
  out.estimate = std::move(*estimate);
  out.predicted = std::move(predicted.timeline);
  const std::int64_t shared = shared_processors_of(plan, &out.measured);
  out.predicted_phases = step_phases(out.predicted, shared, ranks_per_stage(plan));
  out.measured_phases = step_phases(out.measured, shared);
  out.predicted_step_s = predicted.iteration_s;
  // A probe run's summary holds the median over its timed steps; its timeline is the last step
  // only. An import has no step time: its traced window stands for one.
  if (out.run.summary && out.run.summary->step_time_s) {
    out.measured_step_s = *out.run.summary->step_time_s;
    out.measured_step_is_median = true;
  } else {
    out.measured_step_s = out.measured_phases.step_s;
  }
  out.phases = phase_rows(out.predicted_phases, out.measured_phases, true, out.predicted_step_s, out.measured_step_s);
  if (out.run.summary && !out.run.summary->memory_bytes.empty()) {
    out.memory = memory_rows(out.estimate.memory, out.run.summary->memory_bytes);
  }
  out.mismatches = run_plan_mismatches(out.run, out.plan, out.estimate, out.predicted_step_s, out.measured_step_s);
  return out;
}

}  // namespace plansight::core
