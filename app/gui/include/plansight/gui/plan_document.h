// The plan being edited and what the estimator says about it: the one shared state object every
// page listens to (hotspot's FilterAndZoomStack habit). Estimation runs on the document's job
// runner in two stages — the estimate (memory, time, cost; ~1 ms) then the predicted timeline —
// and each edit makes the job of the previous plan stale: it stops early and its results are
// dropped; the GUI thread never waits. Outcomes carry the plan's generation (its edit count).
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/schedule_metrics.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_metrics.h"
#include "plansight/gui/job_runner.h"
#include "plansight/gui/timeline_index.h"

namespace plansight::gui {

struct EstimateOutcome {
  std::uint64_t generation = 0;
  estimator::Plan plan;
  std::vector<Diagnostic> errors;  // validation errors; empty when `estimate` is set
  std::optional<estimator::Estimate> estimate;
};

struct TimelineOutcome {
  std::uint64_t generation = 0;
  std::shared_ptr<const TimelineIndex> index;  // null when there is no timeline (see message)
  estimator::ScheduleBubbles bubbles;
  std::vector<estimator::RankBreakdown> ranks;  // overlap of communication with compute
  QString message;                              // why there is no timeline
};

// Both stages, as the worker computes them; also used directly by tests and benchmarks. With
// `prediction`, the estimate keeps the iteration it simulated (when small enough to draw,
// kMaxTimelineOps) and compute_timeline() takes its timeline instead of simulating again: one
// simulation per edit, not two. Without it, compute_timeline() simulates.
EstimateOutcome compute_estimate(const estimator::Plan& plan, std::uint64_t generation = 0,
                                 estimator::TimePrediction* prediction = nullptr);
TimelineOutcome compute_timeline(const EstimateOutcome& estimate, estimator::TimePrediction* prediction = nullptr);

class PlanDocument : public QObject {
  Q_OBJECT

 public:
  // Plans whose schedule has more ops (estimator::schedule_ops()) than this are estimated but
  // not drawn as a timeline: the limit every predicted timeline keeps.
  static constexpr std::int64_t kMaxTimelineOps = estimator::kMaxTimelineOps;

  explicit PlanDocument(QObject* parent = nullptr);
  ~PlanDocument() override;

  const estimator::Plan& plan() const { return plan_; }
  // An edit from the plan form: re-estimates; the form is not repopulated.
  void editPlan(const estimator::Plan& plan);
  // A new plan from outside the form (file, preset, restore): emits planReplaced, re-estimates.
  void replacePlan(const estimator::Plan& plan);

  // Latest delivered results; null before the first delivery.
  std::shared_ptr<const EstimateOutcome> estimate() const { return estimate_; }
  std::shared_ptr<const TimelineOutcome> timeline() const { return timeline_; }
  std::uint64_t generation() const { return generation_; }
  bool isIdle() const { return !jobs_.isBusy(); }
  // Stops the running estimate (the simulators poll a flag; see estimator/cancellation.h): the
  // plan stays as edited, its outcome is the error "estimate: cancelled before it finished"
  // until the next edit. An edit cancels a running estimate of an older plan by itself: its
  // result would be dropped anyway, and a slow plan must not hold up the next one.
  void cancel();
  bool wasCancelled() const;  // the latest outcome is a cancelled estimate

 signals:
  void planReplaced();
  void estimateReady();  // stage 1 of the latest plan
  void timelineReady();  // stage 2 of the latest plan
  void idle();           // no job running or pending
  void busy();           // a job started (the window shows "estimating" if it takes long)

 private:
  void schedule();
  void deliverEstimate(std::shared_ptr<const EstimateOutcome> outcome);
  void deliverTimeline(std::shared_ptr<const TimelineOutcome> outcome);

  estimator::Plan plan_;
  std::uint64_t generation_ = 0;  // edits so far: the generation of the newest plan
  std::shared_ptr<const EstimateOutcome> estimate_;
  std::shared_ptr<const TimelineOutcome> timeline_;
  JobRunner jobs_;  // last member: destroyed first, so no job outlives what it touches
};

}  // namespace plansight::gui
