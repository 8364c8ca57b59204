// The Plans page: pin the 7.5B example under DDP, switch the edited plan to ZeRO-3, and the page
// shows the one changed field and model states divided by the 64 data-parallel ranks
// (Rajbhandari et al. 2020), both timelines on one axis; a plan file can be pinned; an invalid
// current plan says so.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QFile>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "plansight/estimator/examples.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/plans_page.h"
#include "plansight/gui/timeline_painter.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

int row_of(PlanDiffModel* m, const QString& prefix) {
  for (int r = 0; r < m->rowCount(); ++r) {
    if (m->data(m->index(r, PlanDiffModel::name), Qt::DisplayRole).toString().startsWith(prefix)) return r;
  }
  return -1;
}

TEST(PlansPage, PinnedDdpBesideEditedZeroThree) {
  PlanDocument document;
  auto example = est::find_example("zero-stages-7.5b");
  ASSERT_TRUE(example.ok());
  document.replacePlan(*est::example_plan(*example, 0));
  ASSERT_TRUE(test::wait_idle(document));
  PlansPage page(&document);
  page.resize(1200, 700);
  QAbstractItemModelTester tester(page.model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  EXPECT_FALSE(page.hasPinned());
  page.pinCurrentPlan();
  ASSERT_TRUE(page.hasPinned());
  EXPECT_EQ(page.model()->changeCount(), 0);

  document.editPlan(*est::example_plan(*example, 3));
  ASSERT_TRUE(test::wait_idle(document));
  auto* m = page.model();
  ASSERT_EQ(m->changeCount(), 1);
  EXPECT_EQ(m->data(m->index(0, PlanDiffModel::name), Qt::DisplayRole).toString(), QStringLiteral("layout.zero_stage"));
  EXPECT_EQ(m->data(m->index(0, PlanDiffModel::a), Qt::DisplayRole).toString(), QStringLiteral("0"));
  EXPECT_EQ(m->data(m->index(0, PlanDiffModel::b), Qt::DisplayRole).toString(), QStringLiteral("3"));
  const int optimizer = row_of(m, QStringLiteral("memory per GPU: optimizer states"));
  ASSERT_GE(optimizer, 0);
  EXPECT_NEAR(m->data(m->index(optimizer, PlanDiffModel::ratio), Qt::UserRole).toDouble(), 1.0 / 64, 1e-3);
  EXPECT_EQ(m->data(m->index(optimizer, PlanDiffModel::ratio), Qt::DisplayRole).toString(), QStringLiteral("0.02x"));
  EXPECT_TRUE(page.status().contains(QStringLiteral("1 field(s) differ")) || page.status().contains(QStringLiteral("1 field differ")))
      << page.status().toStdString();
  ASSERT_TRUE(page.pinnedTimeline()->timeline() != nullptr);
  ASSERT_TRUE(page.currentTimeline()->timeline() != nullptr);
  // One time axis: both views show the same range, up to the longer (DDP) iteration's end.
  const auto longer = std::max(page.pinnedTimeline()->timeline()->end_ns(), page.currentTimeline()->timeline()->end_ns());
  EXPECT_GT(page.pinnedTimeline()->timeline()->end_ns(), page.currentTimeline()->timeline()->end_ns())
      << "ZeRO-3's optimizer step is 64x smaller";
  EXPECT_EQ(page.currentTimeline()->extentEnd(), longer);
  EXPECT_EQ(page.pinnedTimeline()->axis().begin_ns, page.currentTimeline()->axis().begin_ns);
  EXPECT_EQ(page.pinnedTimeline()->axis().end_ns, page.currentTimeline()->axis().end_ns);
  // What ZeRO-3 sends is on the timeline though compute hides it: its row of hidden collectives
  // holds the prefetched gathers; DDP's all-reduce is on the lane, and it has no such row.
  const auto hidden_row = [](const TimelineIndex& index) -> const est::Track* {
    for (const auto& track : index.timeline().tracks) {
      if (track_label(track) == QStringLiteral("r0 hidden comm")) return &track;
    }
    return nullptr;
  };
  const est::Track* hidden = hidden_row(*page.currentTimeline()->timeline());
  ASSERT_NE(hidden, nullptr);
  ASSERT_FALSE(hidden->spans.empty());
  EXPECT_EQ(page.currentTimeline()->timeline()->timeline().name_of(hidden->spans.front()),
            "ZeRO-3 all-gather · dp x cp 64 · across nodes");
  EXPECT_EQ(hidden_row(*page.pinnedTimeline()->timeline()), nullptr);

  // An invalid current plan: no numbers, and the page says why.
  est::Plan broken = document.plan();
  broken.layout.tp = 3;
  document.editPlan(broken);
  ASSERT_TRUE(test::wait_idle(document));
  EXPECT_EQ(m->rowCount(), 0);
  EXPECT_TRUE(page.status().contains(QStringLiteral("current plan has errors"))) << page.status().toStdString();
}

TEST(PlansPage, APlanFileCanBePinned) {
  PlanDocument document;
  document.replacePlan(est::default_plan());
  ASSERT_TRUE(test::wait_idle(document));
  PlansPage page(&document);
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("a.json"));
  est::Plan a = document.plan();
  a.layout.pp = 4;
  {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(est::to_json(a).dump()));
  }
  ASSERT_TRUE(page.pinPlanFile(path).isEmpty());
  ASSERT_GE(page.model()->changeCount(), 1);
  EXPECT_EQ(page.model()->data(page.model()->index(0, PlanDiffModel::name), Qt::DisplayRole).toString(),
            QStringLiteral("layout.pp"));
  EXPECT_TRUE(page.pinPlanFile(dir.filePath(QStringLiteral("absent.json"))).contains(QStringLiteral("Cannot read")));
}

}  // namespace
}  // namespace plansight::gui
