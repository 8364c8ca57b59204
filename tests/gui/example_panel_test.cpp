// The Examples menu and panel: each example's rows as numbers (ours beside the published value,
// the opened row in bold), opening a row from the menu makes its plan the plan being edited, and
// "your plan" follows edits (ZeRO-1 -> ZeRO-3 moves the 7.5B model's states from 31.27 to 1.867
// GB, Rajbhandari et al. 2020 Table 1: 31.4 and 1.88); the panel paints offscreen.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QDockWidget>
#include <QImage>
#include <QTemporaryDir>

#include <cmath>

#include "gui_test_support.h"
#include "plansight/estimator/examples.h"
#include "plansight/gui/example_panel.h"
#include "plansight/gui/main_window.h"
#include "plansight/gui/plan_document.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

TEST(ExampleRowsModel, OursBesidePublishedWithTheOpenedRowBold) {
  ExamplePanel panel;
  QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  auto zero = est::find_example("zero-stages-7.5b");
  ASSERT_TRUE(zero.ok());
  ASSERT_TRUE(panel.setExample(*zero, 1).isEmpty());
  const auto* m = panel.model();
  ASSERT_EQ(m->rowCount(), 4);
  EXPECT_EQ(m->data(m->index(1, ExampleRowsModel::label), Qt::DisplayRole).toString(), QStringLiteral("ZeRO-1 (P_os)"));
  EXPECT_NEAR(m->data(m->index(1, ExampleRowsModel::ours), Qt::UserRole).toDouble(), 31.27, 0.005);
  EXPECT_EQ(m->data(m->index(1, ExampleRowsModel::published), Qt::DisplayRole).toString(), QStringLiteral("31.4"));
  EXPECT_EQ(m->data(m->index(1, ExampleRowsModel::unit), Qt::DisplayRole).toString(), QStringLiteral("GB"));
  EXPECT_TRUE(m->data(m->index(1, ExampleRowsModel::label), Qt::FontRole).value<QFont>().bold());
  EXPECT_FALSE(m->data(m->index(0, ExampleRowsModel::label), Qt::FontRole).isValid());
  EXPECT_EQ(example_value_text(0.09375), QStringLiteral("0.09375"));
  EXPECT_EQ(example_value_text(651.92), QStringLiteral("651.9"));
}

// Every row of every example opens from the menu, and the panel sets a number of ours beside
// each published value, in the metric's unit.
TEST(ExamplesMenu, EveryRowOfEveryExampleHasItsActionAndOurValue) {
  QTemporaryDir dir;
  const MainWindowOptions options = test::isolated_window_options(dir);
  MainWindow window(options);
  ExamplePanel panel;
  ASSERT_EQ(est::examples().size(), 12u);
  for (const auto& example : est::examples()) {
    SCOPED_TRACE(example.name);
    for (std::size_t r = 0; r < example.rows.size(); ++r) {
      const QString name = QStringLiteral("example:%1:%2").arg(QString::fromStdString(example.name)).arg(r);
      EXPECT_NE(window.findChild<QAction*>(name), nullptr) << name.toStdString();
    }
    ASSERT_TRUE(panel.setExample(example, 0).isEmpty());
    const auto* m = panel.model();
    ASSERT_EQ(m->rowCount(), static_cast<int>(example.rows.size()));
    for (int r = 0; r < m->rowCount(); ++r) {
      EXPECT_TRUE(std::isfinite(m->data(m->index(r, ExampleRowsModel::ours), Qt::UserRole).toDouble())) << r;
      EXPECT_GT(m->data(m->index(r, ExampleRowsModel::ours), Qt::UserRole).toDouble(), 0) << r;
    }
  }
  auto weeks = est::find_example("weeks-one-vs-four-dgx-a100");
  ASSERT_TRUE(weeks.ok());
  ASSERT_TRUE(panel.setExample(*weeks, 2).isEmpty());
  EXPECT_EQ(panel.model()->data(panel.model()->index(2, ExampleRowsModel::unit), Qt::DisplayRole).toString(),
            QStringLiteral("weeks"));
  EXPECT_EQ(panel.model()->data(panel.model()->index(2, ExampleRowsModel::published), Qt::DisplayRole).toString(),
            QStringLiteral("10.55"));
}

TEST(ExamplesMenu, OpeningARowEditsItsPlanAndYourPlanFollowsEdits) {
  QTemporaryDir dir;
  const MainWindowOptions options = test::isolated_window_options(dir);
  MainWindow window(options);
  window.show();
  ASSERT_TRUE(test::wait_idle(*window.document()));
  EXPECT_FALSE(window.exampleDock()->isVisible()) << "hidden until an example is opened";

  auto* action = window.findChild<QAction*>(QStringLiteral("example:zero-stages-7.5b:1"));
  ASSERT_NE(action, nullptr) << "one menu action per example row";
  action->trigger();
  ASSERT_TRUE(test::wait_idle(*window.document()));
  EXPECT_TRUE(window.exampleDock()->isVisible());
  EXPECT_EQ(window.document()->plan().layout.zero_stage, 1);
  EXPECT_EQ(window.document()->plan().cluster.gpus, 64);
  EXPECT_TRUE(window.examplePanel()->yourPlanText().contains(QStringLiteral("31.27 GB"))) << window.examplePanel()->yourPlanText().toStdString();

  est::Plan edited = window.document()->plan();
  edited.layout.zero_stage = 3;
  window.document()->editPlan(edited);
  ASSERT_TRUE(test::wait_idle(*window.document()));
  const QString text = window.examplePanel()->yourPlanText();
  EXPECT_TRUE(text.contains(QStringLiteral("1.867 GB"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("published 31.4"))) << "still the opened row's published value: " << text.toStdString();

  EXPECT_FALSE(window.openExample(QStringLiteral("no-such"), 0).isEmpty());
  EXPECT_TRUE(window.openExample(QStringLiteral("pipeline-bubble"), 9).contains(QStringLiteral("valid: 0 to 6")));

  const QImage image = window.examplePanel()->grab().toImage();
  ASSERT_FALSE(image.isNull());
  EXPECT_GT(image.width(), 100);
}

}  // namespace
}  // namespace plansight::gui
