// Two-stage estimation off the GUI thread with stale-result dropping (see plan_document.h).
#include "plansight/gui/plan_document.h"

#include <atomic>

#include "plansight/estimator/cancellation.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"

namespace plansight::gui {

namespace est = plansight::estimator;

EstimateOutcome compute_estimate(const est::Plan& plan, std::uint64_t generation, est::TimePrediction* prediction) {
  EstimateOutcome out;
  out.generation = generation;
  out.plan = plan;
  // Keep the simulated iteration for the timeline stage when it will be drawn: one simulation per
  // edit, not two.
  est::EstimateOptions options;
  if (prediction) {
    *prediction = est::TimePrediction{};
    if (est::schedule_ops(plan) <= PlanDocument::kMaxTimelineOps) options.prediction = prediction;
  }
  auto result = est::estimate(plan, options);
  if (result) {
    out.estimate = std::move(result).value();
  } else {
    out.errors = result.errors();
  }
  return out;
}

TimelineOutcome compute_timeline(const EstimateOutcome& estimate, est::TimePrediction* prediction) {
  TimelineOutcome out;
  out.generation = estimate.generation;
  if (!estimate.estimate) {
    out.message = QStringLiteral("No timeline: the plan has errors (see the Plan page).");
    return out;
  }
  const est::Plan& plan = estimate.plan;
  if (auto too_long = est::timeline_size_errors(plan); !too_long.empty()) {
    out.message = QStringLiteral("No timeline drawn: ") + QString::fromStdString(too_long.front().message) + QLatin1Char('.');
    return out;
  }
  est::Timeline timeline;
  if (prediction && !prediction->timeline.tracks.empty()) {
    timeline = std::move(prediction->timeline);  // simulated by the estimate already
  } else {
    auto predicted = est::predict_time(plan, estimate.estimate->padded_vocab);
    if (!predicted) {
      out.message = QStringLiteral("No timeline: ") + QString::fromStdString(predicted.error_text());
      return out;
    }
    timeline = std::move(predicted->timeline);
  }
  out.bubbles = est::schedule_bubbles(timeline);
  out.ranks = est::rank_breakdown(timeline);
  out.index = std::make_shared<const TimelineIndex>(std::move(timeline));
  return out;
}

PlanDocument::PlanDocument(QObject* parent) : QObject(parent), plan_(est::default_plan()), jobs_(this, 1) {
  connect(&jobs_, &JobRunner::idle, this, &PlanDocument::idle);
}

// The job runner's destructor stops a running estimate and waits for it.
PlanDocument::~PlanDocument() = default;

void PlanDocument::editPlan(const est::Plan& plan) {
  plan_ = plan;
  schedule();
}

void PlanDocument::replacePlan(const est::Plan& plan) {
  plan_ = plan;
  emit planReplaced();
  schedule();
}

void PlanDocument::schedule() {
  const std::uint64_t generation = ++generation_;
  const est::Plan plan = plan_;
  if (!jobs_.isBusy()) emit busy();
  // A job of an older plan is stale now: it stops (CancelScope) rather than being waited for,
  // and what it still posts is dropped. Queued stale jobs never run.
  jobs_.start([this, plan, generation](const JobRunner::Job& job) {
    const est::CancelScope scope(job.cancel_flag());
    est::TimePrediction prediction;  // the estimate's simulated iteration, for the timeline stage
    auto estimate = std::make_shared<const EstimateOutcome>(compute_estimate(plan, generation, &prediction));
    job.post([this, estimate] { deliverEstimate(estimate); });
    if (!job.wanted() || job.cancel_flag()->load()) return;
    auto timeline = std::make_shared<const TimelineOutcome>(compute_timeline(*estimate, &prediction));
    job.post([this, timeline] { deliverTimeline(timeline); });
  });
}

void PlanDocument::cancel() { jobs_.stop(); }

bool PlanDocument::wasCancelled() const {
  if (!estimate_ || estimate_->estimate) return false;
  for (const auto& e : estimate_->errors) {
    if (e.field == "estimate" && e.message == est::kCancelledMessage) return true;
  }
  return false;
}

void PlanDocument::deliverEstimate(std::shared_ptr<const EstimateOutcome> outcome) {
  estimate_ = std::move(outcome);
  emit estimateReady();
}

void PlanDocument::deliverTimeline(std::shared_ptr<const TimelineOutcome> outcome) {
  timeline_ = std::move(outcome);
  emit timelineReady();
}

}  // namespace plansight::gui
