// compare_probe_run(): the computation of `plansight compare RUN` (app/cli/src/compare_command.cpp),
// called through the CLI's public headers (probe_plan.h, step_phases.h, run_lookup.h); only the
// row list repeats that file's few lines.
#include "plansight/gui/probe_comparison.h"

#include <algorithm>
#include <cmath>

#include "plansight/cli/probe_plan.h"
#include "plansight/cli/run_lookup.h"
#include "plansight/cli/step_phases.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/time_model.h"
#include "plansight/gui/format.h"

namespace plansight::gui {

namespace est = plansight::estimator;

std::optional<double> ComparisonRow::error() const {
  if (!has_measured || !(measured > 0)) return std::nullopt;
  const double e = predicted / measured - 1;
  return std::isfinite(e) ? std::optional<double>(e) : std::nullopt;
}

bool is_comparable_probe_run(const store::RunRecord& run) {
  return run.kind == store::RunKind::probe && run.plan && run.summary && run.summary->step_time_s;
}

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }


// Starts the timeline at 0 and ends it at `end_ns` with a zero-length marker span, so that two
// views clamped to their own data still show the same range.
est::Timeline normalised(est::Timeline t, std::int64_t begin_ns, std::int64_t end_ns) {
  for (auto& track : t.tracks) {
    for (auto& s : track.spans) s.start_ns -= begin_ns;
  }
  if (!t.tracks.empty() && t.end_ns() - 0 < end_ns) {
    est::Span marker;
    marker.start_ns = end_ns;
    marker.duration_ns = 0;
    marker.kind = est::SpanKind::annotation;
    marker.name_id = t.intern("end of the longer step");
    t.tracks.back().spans.push_back(marker);
  }
  return t;
}

}  // namespace

ProbeComparison compare_probe_run(store::Store& db, std::int64_t run_id) {
  ProbeComparison out;
  out.run_id = run_id;
  auto run = db.get_run(run_id);
  if (!run) return out.error = q(run.error_text()), out;
  if (!is_comparable_probe_run(*run)) {
    out.error = QStringLiteral("run %1 is not a finished probe run").arg(run_id);
    return out;
  }
  auto profile = cli::hardware_profile_of_run(db, *run);
  if (!profile) return out.error = q(profile.error_text()), out;
  auto plan = cli::plan_of_probe_run(*run->plan, *profile);
  if (!plan) return out.error = q(plan.error_text()), out;
  auto estimate = est::estimate(*plan, &*profile);
  if (!estimate) return out.error = q(estimate.error_text()), out;
  est::TimeModelOptions options;
  options.profile = &*profile;
  auto predicted = est::predict_time(*plan, estimate->padded_vocab, options);
  if (!predicted) return out.error = q(predicted.error_text()), out;
  auto measured = db.load_timeline(run_id, est::TimelineSource::measured);

  out.title = QStringLiteral("run %1: %2 on %3").arg(run_id).arg(q(run->name), q(run->device));
  const cli::StepPhases p = cli::step_phases(predicted->timeline);
  const cli::StepPhases m = measured ? cli::step_phases(*measured) : cli::StepPhases{};
  const bool has = measured.ok();
  out.phases = {{QStringLiteral("forward"), p.forward_s, m.forward_s, has},
                {QStringLiteral("backward"), p.backward_s, m.backward_s, has},
                {QStringLiteral("communication"), p.communication_s, m.communication_s, has},
                {QStringLiteral("bubble"), p.bubble_s, m.bubble_s, has},
                {QStringLiteral("optimizer"), p.optimizer_s, m.optimizer_s, has}};
  if (p.other_s > 0 || m.other_s > 0) out.phases.push_back({QStringLiteral("other"), p.other_s, m.other_s, has});
  out.phases.push_back({QStringLiteral("step"), predicted->iteration_s, *run->summary->step_time_s, true});
  out.note = has ? QStringLiteral("Phases: the traced step (%1), averaged over ranks; its bubble includes %2 waiting "
                                  "inside communication calls for a peer. Step: the run's median.")
                       .arg(format_seconds(m.step_s), format_seconds(m.waiting_s))
                 : QStringLiteral("This run stored no measured timeline: only the step time is compared.");

  using MB = est::MemoryBreakdown;
  const std::pair<const char*, double MB::*> fields[] = {
      {"weights", &MB::weights_bytes}, {"gradients", &MB::gradients_bytes}, {"optimizer", &MB::optimizer_bytes},
      {"activations", &MB::activations_bytes}, {"buffers", &MB::buffers_bytes}, {"reserve", &MB::reserve_bytes}};
  const auto& mm = run->summary->memory_bytes;
  auto measured_of = [&](const std::string& c) {
    auto it = mm.find(c);
    return it == mm.end() ? 0.0 : static_cast<double>(it->second);
  };
  double total = 0;
  for (const auto& s : estimate->memory.stages) total = std::max(total, s.memory.total_bytes());
  for (const auto& [name, field] : fields) {
    double largest = 0;
    for (const auto& s : estimate->memory.stages) largest = std::max(largest, s.memory.*field);
    out.memory.push_back({QString::fromLatin1(name), largest, measured_of(name), true});
  }
  out.memory.push_back({QStringLiteral("total"), total, measured_of("total"), true});

  const std::int64_t pb = predicted->timeline.begin_ns();
  std::int64_t extent = predicted->timeline.end_ns() - pb;
  std::int64_t mb = 0;
  if (has) {
    mb = measured->begin_ns();
    extent = std::max(extent, measured->end_ns() - mb);
  }
  out.predicted = std::make_shared<const TimelineIndex>(normalised(std::move(predicted->timeline), pb, extent));
  if (has) out.measured = std::make_shared<const TimelineIndex>(normalised(std::move(*measured), mb, extent));
  return out;
}

}  // namespace plansight::gui
