// The Runs page's actions on a scratch store: rename (a blank name refused), delete only after
// a confirmation, compare two selected runs with numbers equal to `plansight diff A B --json`,
// import a Kineto fixture off the GUI thread as `plansight import` stores it, and an import of a
// bad file shown as the page's message. RunDiffModel under QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QFile>
#include <QInputDialog>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

#include "../support/cli_run.h"
#include "gui_test_support.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_diff.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/run_diff_model.h"
#include "plansight/gui/run_list_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/runs_page.h"
#include "plansight/store/store.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;
using test::answer_next_dialog;

bool wait_runs(RunRepository& runs) {
  if (runs.isIdle()) return true;
  QSignalSpy spy(&runs, &RunRepository::idle);
  return spy.wait(30000) || runs.isIdle();
}

// Two plan runs with predicted timelines: TP 8 PP 8 (the default) and TP 4 PP 4.
struct Scratch {
  QTemporaryDir dir;
  QString path = dir.filePath(QStringLiteral("runs.sqlite"));
  std::int64_t a = 0, b = 0;

  Scratch() {
    auto db = store::Store::open(path.toStdString());
    EXPECT_TRUE(db.ok()) << db.error_text();
    a = add(*db, "tp8 pp8", est::default_plan());
    est::Plan smaller = est::default_plan();
    smaller.layout.tp = 4;
    smaller.layout.pp = 4;
    b = add(*db, "tp4 pp4", smaller);
  }
  static std::int64_t add(store::Store& db, const std::string& name, const est::Plan& plan) {
    store::NewRun run{store::RunKind::plan, name, "", store::RunStatus::complete, est::to_json(plan), ""};
    auto id = db.create_run(run);
    EXPECT_TRUE(id.ok()) << id.error_text();
    auto e = est::estimate(plan);
    auto predicted = est::predict_time(plan, e->padded_vocab);
    EXPECT_TRUE(predicted.ok()) << predicted.error_text();
    EXPECT_TRUE(db.append_timeline(*id, predicted->timeline).ok());
    return *id;
  }
};

struct Page {
  PlanDocument document;
  RunRepository runs;
  RunsPage page;
  explicit Page(const QString& path) : runs(path), page(&document, &runs) {
    page.resize(1200, 800);
    runs.refresh();
    EXPECT_TRUE(wait_runs(runs));
  }
};

TEST(RunsPage, RenamesAfterTheDialogAndRefusesABlankName) {
  Scratch scratch;
  Page p(scratch.path);
  p.page.selectRun(p.page.model()->rowOf(scratch.a));
  answer_next_dialog<QInputDialog>([](QInputDialog* d) {
    d->setTextValue(QStringLiteral("  GPT-3 baseline  "));
    d->accept();
  });
  p.page.renameSelected();
  ASSERT_TRUE(wait_runs(p.runs));
  const int row = p.page.model()->rowOf(scratch.a);
  EXPECT_EQ(p.page.model()->index(row, RunListModel::NameColumn).data().toString(), QStringLiteral("GPT-3 baseline"));
  EXPECT_EQ(p.page.message(), QStringLiteral("Renamed run %1 to \"GPT-3 baseline\"").arg(scratch.a));

  // Blank: refused before the store, with a message; the name stays.
  p.page.selectRun(row);
  answer_next_dialog<QInputDialog>([](QInputDialog* d) {
    d->setTextValue(QStringLiteral("   "));
    d->accept();
  });
  p.page.renameSelected();
  ASSERT_TRUE(wait_runs(p.runs));
  EXPECT_TRUE(p.page.message().contains(QStringLiteral("must not be blank"))) << p.page.message().toStdString();
  EXPECT_EQ(p.page.model()->index(row, RunListModel::NameColumn).data().toString(), QStringLiteral("GPT-3 baseline"));

  // The store's own refusal reaches the page too: a run deleted behind the page's back.
  auto db = store::Store::open(scratch.path.toStdString());
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->delete_run(scratch.b).ok());
  p.runs.renameRun(scratch.b, QStringLiteral("gone"));
  ASSERT_TRUE(wait_runs(p.runs));
  EXPECT_TRUE(p.page.message().startsWith(QStringLiteral("Cannot rename run %1").arg(scratch.b))) << p.page.message().toStdString();
}

TEST(RunsPage, DeletesOnlyAfterConfirmation) {
  Scratch scratch;
  Page p(scratch.path);
  p.page.selectRun(p.page.model()->rowOf(scratch.b));
  QString asked;
  answer_next_dialog<QMessageBox>([&](QMessageBox* box) {
    asked = box->text();
    box->button(QMessageBox::No)->click();
  });
  p.page.deleteSelected();
  ASSERT_TRUE(wait_runs(p.runs));
  EXPECT_TRUE(asked.contains(QStringLiteral("Delete run %1").arg(scratch.b))) << asked.toStdString();
  EXPECT_TRUE(asked.contains(QStringLiteral("cannot be undone"))) << asked.toStdString();
  EXPECT_EQ(p.page.model()->rowCount(), 2) << "No keeps the run";

  answer_next_dialog<QMessageBox>([](QMessageBox* box) { box->button(QMessageBox::Yes)->click(); });
  p.page.deleteSelected();
  ASSERT_TRUE(wait_runs(p.runs));
  ASSERT_EQ(p.page.model()->rowCount(), 1);
  EXPECT_EQ(p.page.model()->rowOf(scratch.b), -1);
  auto db = store::Store::open(scratch.path.toStdString());
  ASSERT_TRUE(db.ok());
  EXPECT_FALSE(db->get_run(scratch.b).ok());
  EXPECT_FALSE(db->load_timeline(scratch.b, est::TimelineSource::predicted).ok()) << "its timelines went with it";
  EXPECT_EQ(p.page.message(), QStringLiteral("Deleted run %1").arg(scratch.b));
}

TEST(RunsPage, ComparesTwoSelectedRunsAsPlansightDiff) {
  Scratch scratch;
  Page p(scratch.path);
  test::ModelTesterWarnings warnings;
  QAbstractItemModelTester tester(p.page.diffModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  p.page.selectRuns({p.page.model()->rowOf(scratch.a), p.page.model()->rowOf(scratch.b)});
  ASSERT_EQ(p.page.selectedRunIds(), (QList<std::int64_t>{scratch.a, scratch.b}));
  QSignalSpy ready(&p.runs, &RunRepository::diffReady);
  p.page.compareSelected();
  ASSERT_TRUE(ready.wait(30000));
  EXPECT_EQ(p.page.detailTabs()->currentIndex(), 1) << "the difference is shown";

  auto cli = testing::run_cli({"diff", std::to_string(scratch.a), std::to_string(scratch.b), "--json", "--db",
                               scratch.path.toStdString()});
  ASSERT_EQ(cli.status, cli::Status::ok) << cli.err;
  const auto j = nlohmann::json::parse(cli.out);
  const RunDiffModel& m = *p.page.diffModel();
  EXPECT_DOUBLE_EQ(m.index(0, RunDiffModel::kA).data(Qt::UserRole).toDouble(), j["makespan"]["a_s"].get<double>());
  EXPECT_DOUBLE_EQ(m.index(0, RunDiffModel::kB).data(Qt::UserRole).toDouble(), j["makespan"]["b_s"].get<double>());
  int compared = 0;
  for (const auto& [group, rows] : {std::pair{QStringLiteral("phase"), j["phases"]}, std::pair{QStringLiteral("kernel class"), j["kernel_classes"]}}) {
    for (const auto& r : rows) {
      const int row = m.rowOf(group, QString::fromStdString(r["key"].get<std::string>()));
      if (r["a_s"].get<double>() == 0 && r["b_s"].get<double>() == 0) {
        EXPECT_EQ(row, -1) << "empty rows are left out, as in the CLI's table";
        continue;
      }
      ASSERT_GE(row, 0) << r.dump();
      EXPECT_DOUBLE_EQ(m.index(row, RunDiffModel::kA).data(Qt::UserRole).toDouble(), r["a_s"].get<double>());
      EXPECT_DOUBLE_EQ(m.index(row, RunDiffModel::kB).data(Qt::UserRole).toDouble(), r["b_s"].get<double>());
      EXPECT_DOUBLE_EQ(m.index(row, RunDiffModel::kDelta).data(Qt::UserRole).toDouble(), r["delta_s"].get<double>());
      ++compared;
    }
  }
  EXPECT_GE(compared, 3) << "forward, backward and communication at least";
  const int forward = m.rowOf(QStringLiteral("phase"), QStringLiteral("forward"));
  ASSERT_GE(forward, 0);
  EXPECT_NE(m.index(forward, RunDiffModel::kA).data(Qt::UserRole).toDouble(),
            m.index(forward, RunDiffModel::kB).data(Qt::UserRole).toDouble());

  // One run selected: nothing to compare, and the page says so.
  p.page.selectRun(0);
  p.page.compareSelected();
  EXPECT_TRUE(p.page.message().startsWith(QStringLiteral("Select exactly two runs"))) << p.page.message().toStdString();
  EXPECT_EQ(warnings.count(), 0);
}

TEST(RunsPage, ImportsATraceOffTheGuiThreadAsPlansightImport) {
  Scratch scratch;
  Page p(scratch.path);
  QSignalSpy imported(&p.runs, &RunRepository::imported);
  p.page.importTrace(QStringLiteral(PLANSIGHT_TEST_DATA_DIR "/traces/kineto_multirank"));
  ASSERT_TRUE(imported.wait(30000)) << p.page.message().toStdString();
  ASSERT_TRUE(wait_runs(p.runs));
  const std::int64_t id = imported.first().at(0).toLongLong();
  EXPECT_TRUE(p.page.message().startsWith(QStringLiteral("Imported run %1 (kineto_multirank): 2 rank(s)").arg(id)))
      << p.page.message().toStdString();
  ASSERT_EQ(p.page.model()->rowCount(), 3);
  EXPECT_EQ(p.page.model()->index(0, RunListModel::KindColumn).data().toString(), QStringLiteral("import"));
  EXPECT_EQ(p.page.model()->index(0, RunListModel::TimelinesColumn).data().toString(), QStringLiteral("imported"));

  // The same trace through `plansight import`: the same records.
  auto cli = testing::run_cli({"import", PLANSIGHT_TEST_DATA_DIR "/traces/kineto_multirank", "--db", scratch.path.toStdString()});
  ASSERT_EQ(cli.status, cli::Status::ok) << cli.err;
  auto db = store::Store::open(scratch.path.toStdString());
  ASSERT_TRUE(db.ok());
  auto mine = db->get_run(id);
  auto theirs = db->get_run(id + 1);
  ASSERT_TRUE(mine.ok() && theirs.ok());
  EXPECT_EQ(mine->name, theirs->name);
  EXPECT_EQ(mine->device, theirs->device);
  EXPECT_EQ(*mine->plan, *theirs->plan);
  EXPECT_EQ(*mine->summary, *theirs->summary);
  auto a = db->list_timelines(id), b = db->list_timelines(id + 1);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ(a->front().span_count, b->front().span_count);

  // A truncated trace: a message naming the file and the byte, nothing stored.
  const QString bad = scratch.dir.filePath(QStringLiteral("truncated.json"));
  QFile f(bad);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write(R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur")");
  f.close();
  QSignalSpy failed(&p.runs, &RunRepository::failed);
  p.page.importTrace(bad);
  ASSERT_TRUE(failed.wait(30000));
  ASSERT_TRUE(wait_runs(p.runs));
  EXPECT_TRUE(p.page.message().startsWith(QStringLiteral("Cannot import truncated.json:"))) << p.page.message().toStdString();
  EXPECT_TRUE(p.page.message().contains(QStringLiteral("byte"))) << p.page.message().toStdString();
  EXPECT_EQ(p.page.model()->rowCount(), 4) << "the page's import and the CLI's, nothing from the bad file";
}

TEST(RunDiffModel, LeavesOutRowsWithNoTimeAndPassesTheModelTester) {
  test::ModelTesterWarnings warnings;
  RunDiffModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  est::TimelineDiff d;
  d.makespan = {"makespan", 1'000'000, 3'000'000, 2'000'000, 3.0};
  d.by_phase = {{"forward", 500'000, 250'000, -250'000, 0.5}, {"optimizer", 0, 0, 0, std::nan("")}};
  d.by_kernel_class = {{"gemm", 0, 10, 10, std::nan("")}};
  model.setDiff(d);
  ASSERT_EQ(model.rowCount(), 3);
  EXPECT_EQ(model.rowOf(QStringLiteral("phase"), QStringLiteral("optimizer")), -1);
  const int forward = model.rowOf(QStringLiteral("phase"), QStringLiteral("forward"));
  EXPECT_EQ(model.index(forward, RunDiffModel::kDelta).data().toString(), QStringLiteral("-250.0 µs"));
  EXPECT_EQ(model.index(forward, RunDiffModel::kRatio).data().toString(), QStringLiteral("0.50x"));
  const int gemm = model.rowOf(QStringLiteral("kernel class"), QStringLiteral("gemm"));
  EXPECT_EQ(model.index(gemm, RunDiffModel::kRatio).data().toString(), QStringLiteral("-")) << "nothing in A";
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(warnings.count(), 0);
}

}  // namespace
}  // namespace plansight::gui
