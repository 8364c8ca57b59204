// The Probe page end to end with the real plansight-probe as its child process: a tiny 2-step
// run shows its measured timeline, steps and memory and is stored exactly as `plansight probe`
// stores the same run; Cancel of a long run stops it with the partial result shown and stored
// as cancelled; the probe's own error, a child that crashes, exits without a result or is
// missing all become the page's message. ProbeStepModel and ProbeMemoryModel under
// QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QFile>
#include <QLabel>
#include <QComboBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <cmath>

#include "../support/cli_run.h"
#include "gui_test_support.h"
#include "plansight/core/probe_events.h"
#include "plansight/core/probe_run_store.h"
#include "plansight/gui/compare_page.h"
#include "plansight/gui/main_window.h"
#include "plansight/gui/probe_memory_model.h"
#include "plansight/gui/probe_page.h"
#include "plansight/gui/probe_runner.h"
#include "plansight/gui/probe_step_model.h"
#include "plansight/gui/run_list_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/runs_page.h"
#include "plansight/gui/step_through_bar.h"
#include "plansight/gui/sweep_chart.h"
#include "plansight/gui/timeline_widget.h"
#include "plansight/store/store.h"

namespace plansight::gui {
namespace {

using test::ModelTesterWarnings;

struct Scratch {
  QTemporaryDir dir;
  QString db = dir.filePath(QStringLiteral("runs.sqlite"));
  Scratch() { qunsetenv("PLANSIGHT_PROBE"); }  // the page finds plansight-probe as the CLI does

  // An executable shell script standing in for plansight-probe.
  QString script(const QString& name, const QByteArray& body) const {
    const QString path = dir.filePath(name);
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\n" + body);
    f.close();
    f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
    return path;
  }
};

bool wait_finished(ProbeRunner& runner, int timeout_ms = 120000) {
  if (!runner.isRunning()) return true;
  QSignalSpy spy(&runner, &ProbeRunner::finished);
  return spy.wait(timeout_ms);
}

ProbeSettings tiny(int steps) {
  ProbeSettings s;
  s.model = QStringLiteral("tiny");
  s.steps = steps;
  return s;
}

// The page starts on "small", the model the probe accuracy benchmark predicts within -14..+2 %;
// "tiny"'s 2 ms step is mostly host gaps and read about -50 % off.
TEST(ProbeRequest, DefaultsToAModelWhosePredictionIsMeaningful) {
  EXPECT_EQ(ProbeSettings{}.model, QStringLiteral("small"));
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  EXPECT_EQ(page.settings().model, QStringLiteral("small"));
}

TEST(ProbeRequest, HasTheKeysPlansightProbeSends) {
  ProbeSettings s = tiny(7);
  s.tp = 2;
  s.pp = 2;
  s.vpp = 2;
  s.schedule = QStringLiteral("interleaved");
  s.zero_stage = 1;
  s.recompute = QStringLiteral("full");
  s.device = QStringLiteral("auto");
  const nlohmann::json r = probe_request(s);
  EXPECT_EQ(r["model"], "tiny");
  EXPECT_EQ(r["steps"], 7);
  EXPECT_EQ(r["device"], "auto");
  EXPECT_EQ(r["precision"], "fp32");
  EXPECT_EQ(r["calibrate"], true);
  EXPECT_EQ(r["learning_rate"], 3e-4);
  EXPECT_EQ(r["lr_warmup_steps"], 0);
  EXPECT_EQ(r["data"], "synthetic");
  EXPECT_EQ(r["layout"], (nlohmann::json{{"tp", 2}, {"pp", 2}, {"vpp", 2}, {"dp", 1}, {"zero_stage", 1},
                                         {"recompute", "full"}, {"schedule", "interleaved"}}));
  EXPECT_EQ(probe_arguments(s), (QStringList{QStringLiteral("-"), QStringLiteral("--calibration"), QStringLiteral("quick")}));
  s.calibration = ProbeSettings::Calibration::full;
  EXPECT_EQ(probe_arguments(s).last(), QStringLiteral("full"));
  s.calibration = ProbeSettings::Calibration::off;
  EXPECT_EQ(probe_request(s)["calibrate"], false);
}

TEST(ProbePage, RunsATinyProbeShowsItsTimelineAndStoresItAsTheCliDoes) {
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  page.resize(1200, 800);
  ModelTesterWarnings warnings;
  QAbstractItemModelTester step_tester(page.stepModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  QAbstractItemModelTester memory_tester(page.memoryModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  QSignalSpy stored(&page, &ProbePage::runStored);
  QSignalSpy progress(page.runner(), &ProbeRunner::progress);

  page.setSettings(tiny(2));
  page.startRun();
  EXPECT_TRUE(page.runner()->isRunning());
  ASSERT_TRUE(wait_finished(*page.runner())) << page.message().toStdString();
  const ProbeOutcome& o = page.runner()->outcome();
  ASSERT_EQ(o.kind, ProbeOutcome::Kind::complete) << o.message.toStdString();
  EXPECT_EQ(progress.count(), 2) << "one progress event per step";
  EXPECT_EQ(progress.last().at(0).toLongLong(), 2);

  // The measured step in the timeline view, with every span of the result.
  ASSERT_TRUE(page.timeline()->timeline());
  EXPECT_GT(page.timeline()->timeline()->span_count(), 10u);
  EXPECT_EQ(page.timeline()->timeline()->timeline().source, estimator::TimelineSource::measured);
  ASSERT_EQ(page.stepModel()->rowCount(), 2);
  EXPECT_EQ(page.stepModel()->index(1, ProbeStepModel::kStep).data(Qt::UserRole).toLongLong(), 2);
  const double loss = page.stepModel()->index(0, ProbeStepModel::kLoss).data(Qt::UserRole).toDouble();
  EXPECT_NEAR(loss, std::log(256.0), 0.5) << "a fresh model over a 256-token vocabulary";
  ASSERT_EQ(page.memoryModel()->rowCount(), 7);
  EXPECT_EQ(page.memoryModel()->index(0, ProbeMemoryModel::kCategory).data().toString(), QStringLiteral("weights"));
  EXPECT_GT(page.memoryModel()->index(0, ProbeMemoryModel::kMemory).data(Qt::UserRole).toLongLong(), 0);
  EXPECT_TRUE(page.message().startsWith(QStringLiteral("Run %1 finished: 2 steps").arg(o.run_id))) << page.message().toStdString();

  // Stored: the run the page reported, with what `plansight probe` keeps.
  ASSERT_EQ(stored.count(), 1);
  const std::int64_t id = stored.first().at(0).toLongLong();
  EXPECT_EQ(id, o.run_id);
  auto db = store::Store::open(scratch.db.toStdString());
  ASSERT_TRUE(db.ok()) << db.error_text();
  auto run = db->get_run(id);
  ASSERT_TRUE(run.ok()) << run.error_text();
  EXPECT_EQ(run->kind, store::RunKind::probe);
  EXPECT_EQ(run->status, store::RunStatus::complete);
  ASSERT_TRUE(run->plan && run->summary);
  EXPECT_EQ(run->name, core::probe_run_name(*run->plan));
  EXPECT_EQ(run->summary->loss_per_step.size(), 2u);
  EXPECT_EQ(*run->summary, *o.summary) << "the page shows what it stored";
  EXPECT_TRUE(run->summary->metrics.count("hardware_profile_id")) << "quick calibration by default, as the CLI";
  auto timeline = db->load_timeline(id, estimator::TimelineSource::measured);
  ASSERT_TRUE(timeline.ok()) << timeline.error_text();

  // The same run through `plansight probe` into the same store: the same kind of record.
  auto cli_run = testing::run_cli({"probe", "--model", "tiny", "--steps", "2", "--db", scratch.db.toStdString(), "--json"});
  ASSERT_EQ(cli_run.status, cli::Status::ok) << cli_run.err;
  const std::int64_t cli_id = nlohmann::json::parse(cli_run.out)["run_id"].get<std::int64_t>();
  auto twin = db->get_run(cli_id);
  ASSERT_TRUE(twin.ok());
  EXPECT_EQ(twin->name, run->name);
  EXPECT_EQ(twin->status, run->status);
  EXPECT_EQ(twin->device, run->device);
  EXPECT_EQ(*twin->plan, *run->plan) << "the same normalised request";
  std::vector<std::string> keys, twin_keys;
  for (const auto& [k, v] : run->summary->metrics) keys.push_back(k);
  for (const auto& [k, v] : twin->summary->metrics) twin_keys.push_back(k);
  EXPECT_EQ(keys, twin_keys);
  auto twin_timelines = db->list_timelines(cli_id);
  auto timelines = db->list_timelines(id);
  ASSERT_TRUE(twin_timelines.ok() && timelines.ok());
  ASSERT_EQ(timelines->size(), twin_timelines->size());
  EXPECT_EQ(timelines->front().track_count, twin_timelines->front().track_count);
  EXPECT_EQ(timelines->front().span_count, twin_timelines->front().span_count);

  // The view paints the spans: the timeline's plot area is not one flat colour.
  page.timeline()->resize(900, 300);
  const QImage image = page.timeline()->grab().toImage();
  QSet<QRgb> colours;
  for (int y = static_cast<int>(TimelineWidget::kRulerHeight) + 2; y < image.height(); y += 2) {
    for (int x = static_cast<int>(TimelineWidget::kLabelWidth) + 2; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  }
  EXPECT_GT(colours.size(), 4) << "background, grid and span colours";

  // The measured step steps through as the predicted one does.
  auto* bar = page.findChild<StepThroughBar*>(QStringLiteral("probeStepThrough"));
  ASSERT_NE(bar, nullptr);
  ASSERT_TRUE(bar->stepThrough().available());
  EXPECT_EQ(bar->stepThrough().size(), page.timeline()->timeline()->span_count());
  bar->setStepMode(true);
  bar->setStep(5);
  std::size_t revealed = 0;
  for (std::size_t n : bar->stepThrough().revealed()) revealed += n;
  EXPECT_EQ(revealed, 5u);
  auto* details = page.findChild<QLabel*>(QStringLiteral("probeStepThroughDetails"));
  ASSERT_NE(details, nullptr);
  EXPECT_FALSE(details->text().isEmpty());
  bar->setStepMode(false);
  EXPECT_EQ(bar->stepThrough().step(), bar->stepThrough().size());
  EXPECT_EQ(warnings.count(), 0);
}

TEST(ProbePage, CancelStopsALongRunAndKeepsThePartialResult) {
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  ProbeSettings s = tiny(100000);
  s.calibration = ProbeSettings::Calibration::off;
  page.setSettings(s);
  QSignalSpy progress(page.runner(), &ProbeRunner::progress);
  page.startRun();
  ASSERT_TRUE(progress.wait(60000)) << "no progress: " << page.message().toStdString();
  ASSERT_TRUE(page.progressText().startsWith(QStringLiteral("Step "))) << page.progressText().toStdString();
  EXPECT_TRUE(page.progressText().contains(QStringLiteral("of 100000"))) << page.progressText().toStdString();
  page.cancelRun();
  EXPECT_EQ(page.runner()->state(), ProbeRunner::State::cancelling);
  ASSERT_TRUE(wait_finished(*page.runner(), 60000));
  const ProbeOutcome& o = page.runner()->outcome();
  ASSERT_EQ(o.kind, ProbeOutcome::Kind::stopped) << o.message.toStdString();
  EXPECT_GE(o.steps.size(), 1u);
  EXPECT_LT(o.steps.size(), 100000u);
  EXPECT_EQ(page.stepModel()->rowCount(), static_cast<int>(o.steps.size()));
  ASSERT_TRUE(page.timeline()->timeline()) << "the partial result's traced step is shown";
  EXPECT_GT(page.timeline()->timeline()->span_count(), 0u);
  EXPECT_TRUE(page.message().startsWith(QStringLiteral("Stopped after"))) << page.message().toStdString();
  EXPECT_EQ(page.progressText(), QStringLiteral("Stopped: partial result"));

  auto db = store::Store::open(scratch.db.toStdString());
  ASSERT_TRUE(db.ok());
  auto run = db->get_run(o.run_id);
  ASSERT_TRUE(run.ok()) << run.error_text();
  EXPECT_EQ(run->status, store::RunStatus::cancelled);
  ASSERT_TRUE(run->summary);
  EXPECT_EQ(run->summary->loss_per_step.size(), o.steps.size());
  EXPECT_EQ(run->summary->metrics.at("stopped_early"), 1.0);
  EXPECT_FALSE(page.runner()->isRunning());
}

// The launcher field runs one probe process per rank under mpirun; the stored run says how it
// was launched. A launcher that cannot be used is a message naming it.
TEST(ProbePage, ALauncherRunsOneProcessPerRank) {
  if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty()) GTEST_SKIP() << "mpirun is not installed";
  qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
  qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  qputenv("OMPI_MCA_rmaps_base_oversubscribe", "1");
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  ProbeSettings s = tiny(2);
  s.dp = 2;
  s.launcher = QStringLiteral("mpirun -np 2");
  page.setSettings(s);
  EXPECT_EQ(page.settings().launcher, s.launcher);
  page.startRun();
  ASSERT_TRUE(wait_finished(*page.runner())) << page.message().toStdString();
  const ProbeOutcome& o = page.runner()->outcome();
  ASSERT_EQ(o.kind, ProbeOutcome::Kind::complete) << o.message.toStdString();
  auto db = store::Store::open(scratch.db.toStdString());
  ASSERT_TRUE(db) << db.error_text();
  auto run = db->get_run(o.run_id);
  ASSERT_TRUE(run) << run.error_text();
  ASSERT_TRUE(run->summary);
  EXPECT_EQ(run->summary->device["launch"]["processes"], 2) << run->summary->device.dump();

  ProbePage bad(&runs);
  s.launcher = QStringLiteral("no-such-launcher -np 2");
  bad.setSettings(s);
  bad.startRun();
  ASSERT_TRUE(wait_finished(*bad.runner()));
  EXPECT_TRUE(bad.message().contains(QStringLiteral("no-such-launcher"))) << bad.message().toStdString();
}

TEST(ProbePage, TheProbesOwnErrorNamesTheField) {
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  ProbeSettings s = tiny(2);
  s.tp = 3;  // tiny has 4 heads
  page.setSettings(s);
  page.startRun();
  ASSERT_TRUE(wait_finished(*page.runner()));
  EXPECT_EQ(page.runner()->outcome().kind, ProbeOutcome::Kind::failed);
  // Read by the probe protocol's own reader before anything starts: the probe's message, at once.
  EXPECT_TRUE(page.message().startsWith(QStringLiteral("The request is invalid, so the probe was not started:")))
      << page.message().toStdString();
  EXPECT_TRUE(page.message().contains(QStringLiteral("layout.tp: value 3 must divide model.heads (4)"))) << page.message().toStdString();
  EXPECT_EQ(page.runner()->outcome().run_id, 0) << "a refused request never started, so nothing is stored";
  EXPECT_FALSE(page.timeline()->timeline());
}

TEST(ProbePage, ACrashingChildBecomesAMessageAndAFailedRun) {
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  page.runner()->setProgram(scratch.script(
      QStringLiteral("crashing-probe"),
      "cat > /dev/null\n"
      "echo '{\"event\":\"started\",\"protocol\":1,\"device\":\"cpu: test\",\"world_size\":1,\"request\":{\"model\":\"tiny\","
      "\"layout\":{\"tp\":1,\"pp\":1,\"dp\":1,\"schedule\":\"1f1b\"}}}'\n"
      "echo '{\"event\":\"progress\",\"step\":1,\"steps\":2,\"loss\":5.5,\"elapsed_s\":0.1,\"eta_s\":0.1}'\n"
      "echo 'segmentation fault in a kernel' >&2\n"
      "kill -SEGV $$\n"));
  page.setSettings(tiny(2));
  page.startRun();
  ASSERT_TRUE(wait_finished(*page.runner()));
  const ProbeOutcome& o = page.runner()->outcome();
  EXPECT_EQ(o.kind, ProbeOutcome::Kind::failed);
  EXPECT_TRUE(page.message().contains(QStringLiteral("crashed"))) << page.message().toStdString();
  EXPECT_TRUE(page.message().contains(QStringLiteral("segmentation fault in a kernel"))) << page.message().toStdString();
  ASSERT_GT(o.run_id, 0) << "the run started, so it is listed";
  auto db = store::Store::open(scratch.db.toStdString());
  ASSERT_TRUE(db.ok());
  auto run = db->get_run(o.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, store::RunStatus::failed);
  EXPECT_NE(run->notes.find("crashed"), std::string::npos) << run->notes;
  EXPECT_EQ(run->name, "probe tiny tp1 pp1 dp1 1f1b");

  // The page is alive: a second run starts.
  page.runner()->setProgram(scratch.script(QStringLiteral("failing-probe"), "cat > /dev/null\nexit 3\n"));
  page.startRun();
  ASSERT_TRUE(wait_finished(*page.runner()));
  EXPECT_TRUE(page.message().contains(QStringLiteral("exited with status 3 without a result"))) << page.message().toStdString();
}

// A GPU run (here a script speaking the protocol as plansight-probe --device cuda does): the
// precision reaches the request, and the summary shows the precision and the tensor-core share,
// with the per-phase shares in its tooltip; the device report is stored with the run.
TEST(ProbePage, AGpuRunShowsItsPrecisionAndTensorCoreShare) {
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  const QString request_copy = scratch.dir.filePath(QStringLiteral("request.json"));
  page.runner()->setProgram(scratch.script(
      QStringLiteral("gpu-probe"),
      "cat > '" + request_copy.toUtf8() + "'\n"
      "echo '{\"event\":\"started\",\"protocol\":1,\"device\":\"cuda: NVIDIA H100 (sm_90, 79 GiB)\",\"world_size\":1,"
      "\"request\":{\"model\":\"tiny\",\"device\":\"cuda\",\"precision\":\"bf16\",\"global_batch\":1,\"seq_len\":64,"
      "\"layout\":{\"tp\":1,\"pp\":1,\"dp\":1,\"schedule\":\"1f1b\"}}}'\n"
      "echo '{\"event\":\"result\",\"device\":\"cuda: NVIDIA H100 (sm_90, 79 GiB)\",\"steps\":[{\"step\":1,\"loss\":5.5,"
      "\"seconds\":0.002}],\"step_time_s\":0.002,\"memory\":[],\"device_report\":{\"api\":\"cuda\",\"precision\":\"bf16\",\"tensor_cores\":{\"source\":"
      "\"kernel-name rules\",\"step\":{\"seconds\":0.002,\"share\":0.718},\"by_phase\":{\"forward\":"
      "{\"seconds\":0.0008,\"share\":0.801}}}},\"stopped_early\":false}'\n"
      "echo '{\"event\":\"done\",\"exit_code\":0,\"stopped_early\":false}'\n"));
  ProbeSettings s = tiny(1);
  s.device = QStringLiteral("cuda");
  s.precision = QStringLiteral("bf16");
  page.setSettings(s);
  EXPECT_EQ(page.settings().precision, QStringLiteral("bf16"));
  page.startRun();
  ASSERT_TRUE(wait_finished(*page.runner()));
  ASSERT_EQ(page.runner()->outcome().kind, ProbeOutcome::Kind::complete) << page.message().toStdString();
  QFile sent(request_copy);
  ASSERT_TRUE(sent.open(QIODevice::ReadOnly));
  EXPECT_EQ(nlohmann::json::parse(sent.readAll().toStdString())["precision"], "bf16");

  auto* summary = page.findChild<QLabel*>(QStringLiteral("probeSummary"));
  ASSERT_NE(summary, nullptr);
  EXPECT_TRUE(summary->text().contains(QStringLiteral(" · bf16"))) << summary->text().toStdString();
  EXPECT_TRUE(summary->text().contains(QStringLiteral("tensor cores <b>71.8 %</b> of kernel time (kernel-name rules)")))
      << summary->text().toStdString();
  EXPECT_TRUE(summary->toolTip().contains(QStringLiteral("forward: 80.1 %"))) << summary->toolTip().toStdString();
  // The loss and step-time curves hold the measured steps.
  auto* curves = page.findChild<SweepChart*>(QStringLiteral("probeCurves"));
  ASSERT_NE(curves, nullptr);
  ASSERT_EQ(curves->result().points.size(), 1u);
  EXPECT_EQ(curves->result().points[0].metrics, (std::vector<double>{5.5, 2.0}));

  auto db = store::Store::open(scratch.db.toStdString());
  ASSERT_TRUE(db.ok());
  auto run = db->get_run(page.runner()->outcome().run_id);
  ASSERT_TRUE(run.ok() && run->summary);
  EXPECT_EQ(run->summary->device["precision"], "bf16");
  EXPECT_DOUBLE_EQ(run->summary->metrics.at("tensor_core_share"), 0.718);
}

TEST(ProbePage, AMissingProbeBecomesAMessage) {
  Scratch scratch;
  RunRepository runs(scratch.db);
  ProbePage page(&runs);
  page.runner()->setProgram(scratch.dir.filePath(QStringLiteral("no-such-probe")));
  page.setSettings(tiny(2));
  page.startRun();
  ASSERT_TRUE(wait_finished(*page.runner()));
  EXPECT_EQ(page.runner()->outcome().kind, ProbeOutcome::Kind::failed);
  EXPECT_TRUE(page.message().startsWith(QStringLiteral("The probe could not start:"))) << page.message().toStdString();
  EXPECT_TRUE(page.message().contains(QStringLiteral("no-such-probe"))) << page.message().toStdString();

  // Where the CLI would look: $PLANSIGHT_PROBE naming something that is not a program.
  ProbePage other(&runs);
  qputenv("PLANSIGHT_PROBE", scratch.dir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
  other.startRun();
  ASSERT_TRUE(wait_finished(*other.runner()));
  qunsetenv("PLANSIGHT_PROBE");
  EXPECT_TRUE(other.message().contains(QStringLiteral("PLANSIGHT_PROBE"))) << other.message().toStdString();
}

TEST(ProbePage, AStoredRunReachesTheRunsAndComparePages) {
  Scratch scratch;
  QTemporaryDir settings;
  MainWindowOptions options;
  options.settings_path = settings.filePath(QStringLiteral("settings.ini"));
  options.store_path = scratch.db;
  options.restore_last_plan = false;
  MainWindow window(options);
  window.show();
  ProbePage* page = window.probePage();
  window.pages()->setCurrentWidget(page);
  ProbeSettings s = tiny(3);
  s.pp = 2;
  page->setSettings(s);
  QSignalSpy listed(window.runs(), &RunRepository::runsChanged);
  page->startRun();
  ASSERT_TRUE(wait_finished(*page->runner()));
  ASSERT_EQ(page->runner()->outcome().kind, ProbeOutcome::Kind::complete) << page->message().toStdString();
  const std::int64_t id = page->runner()->outcome().run_id;
  ASSERT_TRUE(listed.wait(30000)) << "the store is read again";
  EXPECT_GE(window.runsPage()->model()->rowOf(id), 0) << "the run is on the Runs page";

  QSignalSpy compared(window.comparePage(), &ComparePage::comparisonReady);
  QMetaObject::invokeMethod(page->findChild<QObject*>(QStringLiteral("compareProbe")), "click");
  EXPECT_EQ(window.pages()->currentWidget(), window.comparePage());
  // Showing the page may compare its newest run first; wait for ours.
  for (int i = 0; i < 3 && !(window.comparePage()->comparison() && window.comparePage()->comparison()->run_id == id); ++i) {
    ASSERT_TRUE(compared.wait(30000));
  }
  ASSERT_TRUE(window.comparePage()->comparison());
  const auto& c = *window.comparePage()->comparison();
  EXPECT_EQ(c.run_id, id);
  EXPECT_TRUE(c.error.isEmpty()) << c.error.toStdString();
  EXPECT_FALSE(c.against_plan) << "a probe run is compared with its own configuration";
  EXPECT_EQ(window.comparePage()->runPicker()->currentData().toLongLong(), id);
  ASSERT_TRUE(window.comparePage()->measuredView()->timeline());
  // The measured step's spans, plus a marker when the prediction is the longer of the two.
  const std::size_t shown = window.comparePage()->measuredView()->timeline()->span_count();
  EXPECT_GE(shown, page->timeline()->timeline()->span_count());
  EXPECT_LE(shown, page->timeline()->timeline()->span_count() + 1);
}

TEST(ProbeModels, PassTheModelTesterThroughResets) {
  ModelTesterWarnings warnings;
  ProbeStepModel steps;
  ProbeMemoryModel memory;
  QAbstractItemModelTester step_tester(&steps, QAbstractItemModelTester::FailureReportingMode::Warning);
  QAbstractItemModelTester memory_tester(&memory, QAbstractItemModelTester::FailureReportingMode::Warning);
  steps.setSteps({{1, 5.5, 0.01}, {2, std::nan(""), 0.02}});
  EXPECT_EQ(steps.index(1, ProbeStepModel::kLoss).data().toString(), QStringLiteral("diverged"));
  EXPECT_EQ(steps.index(0, ProbeStepModel::kLoss).data().toString(), QStringLiteral("5.5000"));
  memory.setMemory({{"total", 3 << 20}, {"weights", 1 << 20}, {"unknown", 5}});
  ASSERT_EQ(memory.rowCount(), 2) << "known categories only, in their order";
  EXPECT_EQ(memory.index(0, ProbeMemoryModel::kCategory).data().toString(), QStringLiteral("weights"));
  EXPECT_EQ(memory.index(1, ProbeMemoryModel::kMemory).data().toString(), QStringLiteral("3.00 MiB"));
  steps.setSteps({});
  memory.setMemory({});
  EXPECT_EQ(steps.rowCount(), 0);
  EXPECT_EQ(warnings.count(), 0);
}

}  // namespace
}  // namespace plansight::gui
