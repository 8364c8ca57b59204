// The Sweep page: chart layout as numbers (log-2 x axis for a geometric sweep: equal spacing per
// doubling; y from 0 to the largest value plus headroom; invalid values marked on the axis),
// a sweep of the ZeRO stage of the 7.5B example giving the same model states as the Examples
// (Rajbhandari et al. 2020 Table 1), CSV and PNG export with the plan in the title, and the form's
// errors.
#include <gtest/gtest.h>

#include <QFile>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "plansight/estimator/examples.h"
#include "plansight/gui/chart_export.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/sweep_chart.h"
#include "plansight/gui/sweep_page.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

est::SweepResult hand_made() {
  est::SweepResult r;
  r.field = {"micro_batches", "micro_batches"};
  r.metrics = {"bubble_fraction"};
  for (double m : {4.0, 8.0, 16.0, 32.0, 64.0}) r.points.push_back({m, {3.0 / m}, ""});
  r.points[2].metrics.clear();
  r.points[2].error = "training.global_batch: invalid";
  return r;
}

TEST(SweepChartLayout, LogAxisEqualStepsPerDoublingAndErrorMarks) {
  const auto r = hand_made();
  const auto layout = layout_sweep_chart(r, QRectF(0, 0, 600, 300));
  ASSERT_TRUE(layout.log_x) << "4..64 spans a factor of 16";
  ASSERT_EQ(layout.panels.size(), 1u);
  const auto& panel = layout.panels[0];
  ASSERT_EQ(panel.points.size(), 4u);
  ASSERT_EQ(panel.error_x.size(), 1u);
  const double step = panel.points[1].x() - panel.points[0].x();
  EXPECT_NEAR(panel.points[2].x() - panel.points[1].x(), 2 * step, 1e-9) << "8 -> 32 across the invalid 16";
  EXPECT_NEAR(panel.points[3].x() - panel.points[2].x(), step, 1e-9) << "32 -> 64";
  EXPECT_NEAR(panel.error_x[0] - panel.points[1].x(), step, 1e-9) << "16 sits one doubling after 8";
  EXPECT_DOUBLE_EQ(panel.points[0].x(), panel.plot.left());
  EXPECT_DOUBLE_EQ(panel.points[3].x(), panel.plot.right());
  EXPECT_EQ(panel.y_min, 0.0);
  EXPECT_NEAR(panel.y_max, 0.75 * 1.08, 1e-12) << "the largest value plus 8 % headroom";
  EXPECT_NEAR(panel.points[0].y(), panel.plot.bottom() - 0.75 / panel.y_max * panel.plot.height(), 1e-9);
  // Not zero-based (the Probe page's loss): the axis spans the values with an 8 % margin.
  const auto tight = layout_sweep_chart(r, QRectF(0, 0, 600, 300), false);
  EXPECT_NEAR(tight.panels[0].y_min, 3.0 / 64 - 0.08 * (0.75 - 3.0 / 64), 1e-12);
  EXPECT_NEAR(tight.panels[0].y_max, 0.75 + 0.08 * (0.75 - 3.0 / 64), 1e-12);
  SweepChart chart;
  chart.resize(600, 300);
  chart.setResult(r);
  EXPECT_TRUE(chart.toolTipAt(QPointF(panel.error_x[0], panel.plot.bottom())).contains(QStringLiteral("invalid")));
  EXPECT_TRUE(chart.toolTipAt(panel.points[0]).startsWith(QStringLiteral("micro_batches = 4: 0.75 bubble_fraction")))
      << chart.toolTipAt(panel.points[0]).toStdString();
}

TEST(SweepPage, ZeroStagesOfTheExamplePlanWithCsvAndPng) {
  PlanDocument document;
  auto example = est::find_example("zero-stages-7.5b");
  ASSERT_TRUE(example.ok());
  document.replacePlan(*est::example_plan(*example, 0));
  ASSERT_TRUE(test::wait_idle(document));
  SweepPage page(&document);
  page.resize(1000, 600);
  QSignalSpy done(&page, &SweepPage::sweepFinished);
  page.setSweep(QStringLiteral("zero"), QStringLiteral("0..3"), {QStringLiteral("model_states_gb")});
  ASSERT_TRUE(page.startSweep()) << page.status().toStdString();
  ASSERT_TRUE(done.wait(30000));
  ASSERT_TRUE(page.result().has_value());
  auto rows = est::evaluate(*example);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(page.result()->points.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(page.result()->points[i].metrics[0], (*rows)[i].ours);
  EXPECT_TRUE(page.status().contains(QStringLiteral("narayanan-7.5b on 64 x a100-80gb-sxm"))) << page.status().toStdString();

  QTemporaryDir dir;
  const QString csv = dir.filePath(QStringLiteral("sweep.csv"));
  ASSERT_TRUE(page.exportCsv(csv).isEmpty());
  QFile file(csv);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_TRUE(file.readLine().startsWith("zero,model_states_gb,error"));
  EXPECT_EQ(page.exportTitle(), QStringLiteral("Sweep of zero"));
  const QString png = dir.filePath(QStringLiteral("sweep.png"));
  ASSERT_TRUE(export_png(page, png).isEmpty());
  const QImage image(png);
  ASSERT_FALSE(image.isNull());
  EXPECT_GE(image.width(), 1280) << "2x the logical size";
}

TEST(SweepPage, FormErrorsAreShownAndNothingRuns) {
  PlanDocument document;
  ASSERT_TRUE(test::wait_idle(document));
  SweepPage page(&document);
  page.setSweep(QStringLiteral("pp"), QStringLiteral("8..1"), {QStringLiteral("memory_gib")});
  EXPECT_FALSE(page.startSweep());
  EXPECT_TRUE(page.status().contains(QStringLiteral("must not run backwards"))) << page.status().toStdString();
  page.setSweep(QStringLiteral("speed"), QStringLiteral("1..2"), {QStringLiteral("memory_gib")});
  EXPECT_FALSE(page.startSweep());
  EXPECT_TRUE(page.status().contains(QStringLiteral("not a numeric plan field"))) << page.status().toStdString();
  page.setSweep(QStringLiteral("pp"), QStringLiteral("1..2"), {});
  EXPECT_FALSE(page.startSweep());
  EXPECT_TRUE(page.status().contains(QStringLiteral("Tick at least one metric")));
  EXPECT_FALSE(page.result().has_value());
}

}  // namespace
}  // namespace plansight::gui
