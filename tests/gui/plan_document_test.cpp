// PlanDocument: results arrive in two stages for the latest plan only; edits made while a job
// runs coalesce, and stale results are dropped rather than shown.
#include <gtest/gtest.h>

#include <QSignalSpy>

#include "gui_test_support.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/plan_document.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

TEST(PlanDocument, DeliversTheEstimateThenTheTimelineOfTheLatestPlan) {
  PlanDocument document;
  QSignalSpy estimates(&document, &PlanDocument::estimateReady);
  QSignalSpy timelines(&document, &PlanDocument::timelineReady);
  document.replacePlan(est::default_plan());
  ASSERT_TRUE(test::wait_idle(document));
  EXPECT_EQ(estimates.count(), 1);
  EXPECT_EQ(timelines.count(), 1);
  ASSERT_TRUE(document.estimate() && document.estimate()->estimate);
  ASSERT_TRUE(document.timeline() && document.timeline()->index);
  EXPECT_EQ(document.estimate()->generation, document.generation());
  EXPECT_EQ(document.timeline()->generation, document.generation());
  EXPECT_GT(document.timeline()->index->span_count(), 1000u);
  EXPECT_NEAR(document.timeline()->bubbles.mean_fraction, document.estimate()->estimate->time.bubble_fraction, 0.05);
}

TEST(PlanDocument, RapidEditsEndOnTheLastPlanAndDropStaleResults) {
  PlanDocument document;
  QSignalSpy estimates(&document, &PlanDocument::estimateReady);
  est::Plan plan = est::default_plan();
  for (std::int64_t pp : {1, 2, 4, 8, 16, 2, 4}) {
    plan.layout.pp = pp;
    document.editPlan(plan);
  }
  ASSERT_TRUE(test::wait_idle(document));
  // Seven edits, at most two jobs: the one running when the edits came, and the coalesced last.
  EXPECT_LE(estimates.count(), 2);
  ASSERT_TRUE(document.estimate());
  EXPECT_EQ(document.estimate()->plan.layout.pp, 4);
  EXPECT_EQ(document.estimate()->generation, document.generation());
  auto direct = est::estimate(plan);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(document.estimate()->estimate->memory.peak.total_bytes(), direct->memory.peak.total_bytes());
  EXPECT_EQ(document.estimate()->estimate->time.iteration_s, direct->time.iteration_s);
}

TEST(PlanDocument, InvalidPlansReportErrorsAndNoTimeline) {
  PlanDocument document;
  est::Plan plan = est::default_plan();
  plan.layout.tp = 5;
  document.editPlan(plan);
  ASSERT_TRUE(test::wait_idle(document));
  ASSERT_TRUE(document.estimate());
  EXPECT_FALSE(document.estimate()->estimate);
  EXPECT_FALSE(document.estimate()->errors.empty());
  ASSERT_TRUE(document.timeline());
  EXPECT_FALSE(document.timeline()->index);
  EXPECT_FALSE(document.timeline()->message.isEmpty());
}

TEST(PlanDocument, HugeSchedulesAreEstimatedButNotDrawn) {
  est::Plan plan = est::default_plan();
  plan.training.global_batch = 16 * 60'000;  // 60,000 micro-batches x 8 stages
  plan.training.mfu = 0.4;                     // a given throughput: the estimate itself is instant
  const EstimateOutcome e = compute_estimate(plan);
  ASSERT_TRUE(e.estimate) << (e.errors.empty() ? "" : e.errors.front().to_string());
  const TimelineOutcome t = compute_timeline(e);
  EXPECT_FALSE(t.index);
  EXPECT_TRUE(t.message.contains(QStringLiteral("60000"))) << t.message.toStdString();
}

}  // namespace
}  // namespace plansight::gui
