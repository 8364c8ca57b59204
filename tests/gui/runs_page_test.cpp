// The Runs page over a temporary store: runs listed newest first, a run's timeline loaded off
// the GUI thread into the timeline view with every span, the current plan kept as a run, and a
// run's plan opened back into the editor. RunListModel under QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QFile>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/gui/main_window.h"
#include "plansight/gui/run_list_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/runs_page.h"
#include "plansight/gui/timeline_widget.h"
#include "plansight/store/store.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

bool wait_runs(RunRepository& runs) {
  if (runs.isIdle()) return true;
  QSignalSpy spy(&runs, &RunRepository::idle);
  return spy.wait(20000) || runs.isIdle();
}

struct StoreFixture {
  QTemporaryDir dir;
  QString path = dir.filePath(QStringLiteral("runs.sqlite"));
  std::int64_t timeline_run = 0;
  std::size_t spans = 0;

  StoreFixture() {
    auto db = store::Store::open(path.toStdString());
    EXPECT_TRUE(db.ok()) << db.error_text();
    est::Plan plan = est::default_plan();
    plan.layout.tp = 4;
    plan.layout.pp = 4;
    store::NewRun older{store::RunKind::plan, "tp4 pp4", "", store::RunStatus::complete, est::to_json(plan), ""};
    auto first = db->create_run(older);
    EXPECT_TRUE(first.ok());
    auto e = est::estimate(plan);
    auto predicted = est::predict_time(plan, e->padded_vocab);
    EXPECT_TRUE(predicted.ok());
    for (const auto& t : predicted->timeline.tracks) spans += t.spans.size();
    EXPECT_TRUE(db->append_timeline(*first, predicted->timeline).ok());
    timeline_run = *first;
    store::NewRun newer{store::RunKind::probe, "probe without timeline", "cpu", store::RunStatus::failed, std::nullopt, "n"};
    EXPECT_TRUE(db->create_run(newer).ok());
  }
};

TEST(RunListModel, PassesTheModelTester) {
  test::ModelTesterWarnings warnings;
  StoreFixture fixture;
  RunRepository repository(fixture.path);
  RunListModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  repository.refresh();
  ASSERT_TRUE(wait_runs(repository));
  model.setRuns(repository.runs());
  ASSERT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.index(0, RunListModel::NameColumn).data().toString(), QStringLiteral("probe without timeline"));
  EXPECT_EQ(model.index(1, RunListModel::TimelinesColumn).data().toString(), QStringLiteral("predicted"));
  EXPECT_EQ(model.index(1, 0).data(RunListModel::RunIdRole).toLongLong(), fixture.timeline_run);
  model.setRuns({});
  EXPECT_EQ(warnings.count(), 0);
}

TEST(RunsPage, ListsRunsLoadsTimelinesKeepsAndOpensPlans) {
  StoreFixture fixture;
  QTemporaryDir settings;
  MainWindowOptions options;
  options.settings_path = settings.filePath(QStringLiteral("settings.ini"));
  options.store_path = fixture.path;
  options.restore_last_plan = false;
  MainWindow window(options);
  window.show();
  ASSERT_TRUE(test::wait_idle(*window.document()));
  EXPECT_TRUE(window.runs()->runs().empty()) << "the store is read only when the page shows";

  window.pages()->setCurrentWidget(window.runsPage());
  ASSERT_TRUE(wait_runs(*window.runs()));
  RunsPage* page = window.runsPage();
  ASSERT_EQ(page->model()->rowCount(), 2);

  const int row = page->model()->rowOf(fixture.timeline_run);
  page->selectRun(row);
  ASSERT_TRUE(wait_runs(*window.runs()));
  ASSERT_TRUE(page->timeline()->timeline());
  EXPECT_EQ(page->timeline()->timeline()->span_count(), fixture.spans);

  // Keep the current plan (the default) as a run: a third row appears, newest first.
  QMetaObject::invokeMethod(page->findChild<QObject*>(QStringLiteral("savePlanAsRun")), "click");
  ASSERT_TRUE(wait_runs(*window.runs()));
  ASSERT_EQ(page->model()->rowCount(), 3);
  EXPECT_TRUE(page->model()->index(0, RunListModel::NameColumn).data().toString().contains(QStringLiteral("TP8 PP8")));

  // Open the tp4/pp4 run's plan into the editor.
  page->selectRun(page->model()->rowOf(fixture.timeline_run));
  ASSERT_TRUE(wait_runs(*window.runs()));
  QMetaObject::invokeMethod(page->findChild<QObject*>(QStringLiteral("openRunPlan")), "click");
  ASSERT_TRUE(test::wait_idle(*window.document()));
  EXPECT_EQ(window.document()->plan().layout.tp, 4);
  EXPECT_EQ(window.document()->plan().layout.pp, 4);
  EXPECT_EQ(window.pages()->currentIndex(), 0);
}

TEST(RunRepository, ReportsAStoreThatCannotBeOpened) {
  QTemporaryDir dir;
  const QString not_a_db = dir.filePath(QStringLiteral("plain.txt"));
  {
    QFile f(not_a_db);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("this is not a SQLite database, just text long enough to have a header page ..........");
  }
  RunRepository repository(not_a_db);
  QSignalSpy failed(&repository, &RunRepository::failed);
  repository.refresh();
  ASSERT_TRUE(wait_runs(repository));
  ASSERT_EQ(failed.count(), 1);
  EXPECT_TRUE(failed.first().at(0).toString().contains(QStringLiteral("run store"))) << failed.first().at(0).toString().toStdString();
}

}  // namespace
}  // namespace plansight::gui
