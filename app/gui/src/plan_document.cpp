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
    const std::int64_t ops = plan.layout.pp * plan.layout.vpp * std::max<std::int64_t>(plan.micro_batches(), 0);
    if (ops <= PlanDocument::kMaxTimelineOps) options.prediction = prediction;
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
  const std::int64_t ops = plan.layout.pp * plan.layout.vpp * estimate.estimate->micro_batches;
  if (ops > PlanDocument::kMaxTimelineOps) {
    out.message = QStringLiteral("No timeline drawn: %1 micro-batches x %2 pipeline chunks is more than %3 ops.")
                      .arg(estimate.estimate->micro_batches)
                      .arg(plan.layout.pp * plan.layout.vpp)
                      .arg(PlanDocument::kMaxTimelineOps);
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

PlanDocument::PlanDocument(QObject* parent)
    : QObject(parent), plan_(est::default_plan()), latest_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
  pool_.setMaxThreadCount(1);
}

PlanDocument::~PlanDocument() {
  // A running job posts to this object; stop it and wait for it before members go.
  if (cancel_) cancel_->store(true);
  pool_.clear();
  pool_.waitForDone();
}

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
  latest_->store(++generation_);
  if (running_) {
    cancel_->store(true);  // its plan is stale: stop it rather than wait for it
    pending_ = true;
    return;
  }
  start();
}

void PlanDocument::cancel() {
  if (running_ && !pending_) cancel_->store(true);
}

bool PlanDocument::wasCancelled() const {
  if (!estimate_ || estimate_->estimate) return false;
  for (const auto& e : estimate_->errors) {
    if (e.field == "estimate" && e.message == est::kCancelledMessage) return true;
  }
  return false;
}

void PlanDocument::start() {
  running_ = true;
  pending_ = false;
  const est::Plan plan = plan_;
  const std::uint64_t generation = generation_;
  auto latest = latest_;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = cancel_;
  emit busy();
  pool_.start([this, plan, generation, latest, cancel] {
    const est::CancelScope scope(cancel.get());
    est::TimePrediction prediction;  // the estimate's simulated iteration, for the timeline stage
    auto estimate = std::make_shared<const EstimateOutcome>(compute_estimate(plan, generation, &prediction));
    QMetaObject::invokeMethod(
        this, [this, estimate] { deliverEstimate(estimate); }, Qt::QueuedConnection);
    if (latest->load() == generation && !cancel->load()) {
      auto timeline = std::make_shared<const TimelineOutcome>(compute_timeline(*estimate, &prediction));
      QMetaObject::invokeMethod(
          this, [this, timeline] { deliverTimeline(timeline); }, Qt::QueuedConnection);
    }
    QMetaObject::invokeMethod(
        this, [this] { jobFinished(); }, Qt::QueuedConnection);
  });
}

void PlanDocument::deliverEstimate(std::shared_ptr<const EstimateOutcome> outcome) {
  if (outcome->generation != generation_) return;  // the plan changed since: drop
  estimate_ = std::move(outcome);
  emit estimateReady();
}

void PlanDocument::deliverTimeline(std::shared_ptr<const TimelineOutcome> outcome) {
  if (outcome->generation != generation_) return;
  timeline_ = std::move(outcome);
  emit timelineReady();
}

void PlanDocument::jobFinished() {
  running_ = false;
  if (pending_) {
    start();
    return;
  }
  emit idle();
}

}  // namespace plansight::gui
