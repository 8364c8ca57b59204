// compare_probe_run() and compare_run_with_plan(): the computations of `plansight compare RUN`
// and `plansight compare RUN --plan FILE`, called through the CLI's public headers
// (probe_plan.h, plan_run_comparison.h, step_phases.h, run_lookup.h; run_throughput.h through
// run_figures.cpp), so that the page and the CLI print the same numbers; this file only turns
// them into rows and indexed timelines.
#include "plansight/gui/run_comparison.h"

#include <algorithm>
#include <cmath>

#include "plansight/core/operator_comparison.h"
#include "plansight/core/plan_run_comparison.h"
#include "plansight/core/probe_plan.h"
#include "plansight/core/run_lookup.h"
#include "plansight/core/step_phases.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_layers.h"
#include "plansight/gui/format.h"
#include "run_figures.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {
core::ComparedValue as_compared(const ComparisonRow& r) {
  core::ComparedValue v{r.name.toStdString(), r.predicted, r.measured, r.has_measured};
  v.step_s = r.step_s;
  return v;
}
}  // namespace

std::optional<double> ComparisonRow::error() const { return as_compared(*this).error(); }
std::optional<double> ComparisonRow::of_step() const { return as_compared(*this).of_step(); }

bool is_comparable_probe_run(const store::RunRecord& run) {
  return run.kind == store::RunKind::probe && run.plan && run.summary && run.summary->step_time_s;
}

bool has_measured_timeline(const std::vector<store::TimelineInfo>& timelines) {
  return std::any_of(timelines.begin(), timelines.end(), [](const store::TimelineInfo& t) {
    return t.source == est::TimelineSource::measured || t.source == est::TimelineSource::imported;
  });
}

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

std::vector<ComparisonRow> rows_of(const std::vector<core::ComparedValue>& values) {
  std::vector<ComparisonRow> rows;
  for (const auto& v : values) rows.push_back({q(v.name), v.predicted, v.measured, v.has_measured, v.step_s});
  return rows;
}

// Starts the timeline at 0 and ends it at `end_ns` with a zero-length marker span, so that two
// views clamped to their own data still show the same range.
est::Timeline normalised(est::Timeline t, std::int64_t begin_ns, std::int64_t end_ns) {
  for (auto& track : t.tracks) {
    for (auto& s : track.spans) s.start_ns -= begin_ns;
  }
  if (!t.tracks.empty() && t.end_ns() < end_ns) {
    est::Span marker;
    marker.start_ns = end_ns;
    marker.duration_ns = 0;
    marker.kind = est::SpanKind::annotation;
    marker.name_id = t.intern("end of the longer timeline");
    t.tracks.back().spans.push_back(marker);
  }
  return t;
}

// Spans the Compare page lays out per layer at most (TimelinePage's bound).
constexpr std::size_t kMaxLayerSpans = 1'500'000;

// Both timelines on one axis: each from 0, both as long as the longer one; the predicted one also
// laid out layer by layer (`plan`, `padded_vocab`, `profile`: those it was predicted with).
void index_both(RunComparison& out, est::Timeline predicted, std::optional<est::Timeline> measured, const est::Plan& plan,
                std::int64_t padded_vocab, const est::HardwareProfile* profile) {
  const std::int64_t pb = predicted.begin_ns();
  std::int64_t extent = predicted.end_ns() - pb;
  std::int64_t mb = 0;
  if (measured) {
    mb = measured->begin_ns();
    extent = std::max(extent, measured->end_ns() - mb);
  }
  est::LayerTimelineOptions options;
  options.max_spans = kMaxLayerSpans;
  options.profile = profile;
  if (auto layered = est::layer_timeline(plan, padded_vocab, predicted, options)) {
    out.predicted_layers = std::make_shared<const TimelineIndex>(normalised(std::move(layered->timeline), pb, extent));
  } else {
    out.layers_message = q(layered.errors().front().message);
  }
  out.predicted = std::make_shared<const TimelineIndex>(normalised(std::move(predicted), pb, extent));
  if (measured) out.measured = std::make_shared<const TimelineIndex>(normalised(std::move(*measured), mb, extent));
}

}  // namespace

RunComparison compare_probe_run(store::Store& db, std::int64_t run_id) {
  RunComparison out;
  out.run_id = run_id;
  auto run = db.get_run(run_id);
  if (!run) return out.error = q(run.error_text()), out;
  if (!is_comparable_probe_run(*run)) {
    out.error = QStringLiteral("run %1 is not a finished probe run; compare it with the current plan instead").arg(run_id);
    return out;
  }
  auto profile = core::hardware_profile_of_run(db, *run);
  if (!profile) return out.error = q(profile.error_text()), out;
  auto plan = core::plan_of_probe_run(*run->plan, *profile, core::launched_processes(run->summary->device));
  if (!plan) return out.error = q(plan.error_text()), out;
  // One simulation of the run's plan gives the estimate (its memory) and the predicted timeline.
  est::TimePrediction prediction;
  auto estimate = est::estimate_with_prediction(*plan, &*profile, prediction);
  if (!estimate) return out.error = q(estimate.error_text()), out;
  auto measured = db.load_timeline(run_id, est::TimelineSource::measured);

  out.title = QStringLiteral("run %1: %2 on %3, against the estimator's prediction of its own configuration")
                  .arg(run_id)
                  .arg(q(run->name), q(run->device));
  const std::int64_t shared = core::shared_processors_of(*plan, measured ? &*measured : nullptr);
  const core::StepPhases p = core::step_phases(prediction.timeline, shared, core::ranks_per_stage(*plan));
  const core::StepPhases m = measured ? core::step_phases(*measured, shared) : core::StepPhases{};
  const bool has = measured.ok();
  out.phases = rows_of(core::phase_rows(p, m, has, prediction.iteration_s, *run->summary->step_time_s));
  out.memory = rows_of(core::memory_rows(estimate->memory, run->summary->memory_bytes));
  if (has) {
    const core::OperatorComparisons ops = core::compare_operators(*plan, &*profile, estimate->padded_vocab, *measured);
    if (ops.matched()) {
      for (const auto& r : ops.rows) {
        ComparisonRow row;
        row.name = QStringLiteral("%1 %2").arg(q(r.probe_name), q(std::string(est::to_string(r.phase))));
        row.predicted = r.predicted_s;
        row.measured = r.measured_s;
        row.has_measured = r.measured_calls > 0;
        out.operators.push_back(row);
      }
      out.operators_note = QStringLiteral("Every rank and micro-batch of the step, as %1; the operator model's costs "
                                          "against the probe's spans of each operator. Not in the rows: %2 of other "
                                          "compute (embedding, optimizer).")
                               .arg(q(ops.measured_basis()), format_seconds(ops.unmatched_measured_s));
    }
  }
  const QString phases_note =
      shared > 0 ? QStringLiteral("Phases: the traced step (%1). %2 Step: the run's median.")
                       .arg(format_seconds(m.step_s), q(core::shared_phases_note(shared, *plan)))
                 : QStringLiteral("Phases: the traced step (%1), averaged over ranks; its idle time includes %2 waiting "
                                  "inside communication calls for a peer. Step: the run's median.")
                       .arg(format_seconds(m.step_s), format_seconds(m.waiting_s));
  out.note = has ? phases_note + QLatin1Char('\n') + q(core::comparison_legend())
                 : QStringLiteral("This run stored no measured timeline: only the step time is compared.");
  add_run_figures(out, *run, *plan, *estimate, *profile, prediction.timeline, has ? &*measured : nullptr,
                  out.phases.back().predicted, out.phases.back().measured);
  index_both(out, std::move(prediction.timeline), has ? std::optional<est::Timeline>(std::move(*measured)) : std::nullopt,
             *plan, estimate->padded_vocab, &*profile);
  return out;
}

RunComparison compare_run_with_plan(store::Store& db, std::int64_t run_id, const est::Plan& plan) {
  RunComparison out;
  out.run_id = run_id;
  out.against_plan = true;
  if (auto problems = est::validate(plan); has_errors(problems)) {
    return out.error = QStringLiteral("the current plan has errors: ") + q(join_messages(problems)), out;
  }
  if (auto too_long = est::timeline_size_errors(plan); !too_long.empty()) {
    return out.error = QStringLiteral("the current plan's timeline is too long to compare: ") + q(join_messages(too_long)), out;
  }
  auto c = core::compare_run_with_plan(db, run_id, plan);  // estimates the plan once, keeping its timeline
  if (!c) return out.error = q(c.error_text()), out;
  out.title = QStringLiteral("run %1: %2 (%3 timeline), against the current plan: %4 on %5 x %6")
                  .arg(run_id)
                  .arg(q(c->run.name), QString::fromLatin1(est::to_string(c->measured_source).data()),
                       q(plan.model.name))
                  .arg(plan.cluster.gpus)
                  .arg(q(plan.cluster.gpu.name));
  out.phases = rows_of(c->phases);
  out.memory = rows_of(c->memory);
  out.note = QStringLiteral("Phases: each timeline averaged over its ranks (the measured one spans %1; its idle "
                            "time includes %2 waiting inside communication calls). Step: predicted iteration against %3.")
                 .arg(format_seconds(c->measured_phases.step_s), format_seconds(c->measured_phases.waiting_s),
                      c->measured_step_is_median ? QStringLiteral("the run's median step")
                                                 : QStringLiteral("the traced window")) +
             QLatin1Char('\n') + q(core::comparison_legend());
  for (const auto& w : c->mismatches) out.warnings << q(w);
  index_both(out, std::move(c->predicted), std::move(c->measured), c->plan, c->estimate.padded_vocab, nullptr);
  return out;
}

}  // namespace plansight::gui
