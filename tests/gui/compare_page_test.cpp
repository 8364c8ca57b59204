// The Compare page over a temporary store holding a probe run made here through the store API
// (request, hardware profile, summary, and a "measured" timeline: the prediction stretched by
// 1.25): the phase table shows forward … step with errors, memory per category, both timelines
// on one axis that zooms together; an empty store shows how to make a probe run. An imported
// Kineto fixture beside the current plan's prediction gives the numbers of `plansight compare
// RUN --plan FILE --json` and follows the plan's edits. The models under QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <fstream>

#include "../support/cli_run.h"
#include "gui_test_support.h"
#include "plansight/core/probe_plan.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/gui/compare_page.h"
#include "plansight/gui/comparison_model.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/shared_time_axis.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;
using test::ModelTesterWarnings;

struct ProbeStore {
  QTemporaryDir dir;
  QString path = dir.filePath(QStringLiteral("runs.sqlite"));
  std::int64_t run_id = 0;
  double measured_step_s = 0;

  explicit ProbeStore(bool with_probe_run) {
    auto db = store::Store::open(path.toStdString());
    EXPECT_TRUE(db.ok()) << db.error_text();
    if (!with_probe_run) {
      store::NewRun plan_run{store::RunKind::plan, "a plan", "", store::RunStatus::complete, std::nullopt, ""};
      EXPECT_TRUE(db->create_run(plan_run).ok());
      return;
    }
    const nlohmann::json request = {
        {"model", {{"name", "small"}, {"layers", 4}, {"hidden", 128}, {"heads", 4}, {"kv_heads", 4},
                   {"ffn_hidden", 512}, {"vocab", 256}, {"max_seq_len", 128}, {"dropout", false}}},
        {"layout", {{"tp", 2}, {"pp", 2}, {"dp", 1}, {"schedule", "1f1b"}}},
        {"micro_batch", 1}, {"global_batch", 4}, {"seq_len", 128}, {"steps", 10}};
    est::HardwareProfile profile;
    profile.device = "cpu: test";
    profile.peak_flops = 5e10;
    profile.memory_bandwidth_bytes_per_s = 1e10;
    profile.collectives.push_back({est::Collective::all_reduce, 2, 1 << 20, 1e-3, false});
    auto profile_id = db->save_hardware_profile(profile.device, est::to_json(profile));
    EXPECT_TRUE(profile_id.ok()) << profile_id.error_text();
    store::NewRun run{store::RunKind::probe, "probe small", "cpu: test", store::RunStatus::complete, request, ""};
    auto id = db->create_run(run);
    EXPECT_TRUE(id.ok()) << id.error_text();
    run_id = *id;

    // "Measured": the predicted step, 25% slower.
    auto plan = core::plan_of_probe_run(request, profile);
    EXPECT_TRUE(plan.ok()) << plan.error_text();
    auto e = est::estimate(*plan, &profile);
    est::TimeModelOptions options;
    options.profile = &profile;
    auto predicted = est::predict_time(*plan, e->padded_vocab, options);
    EXPECT_TRUE(predicted.ok()) << predicted.error_text();
    est::Timeline measured = predicted->timeline;
    measured.source = est::TimelineSource::measured;
    for (auto& t : measured.tracks) {
      for (auto& s : t.spans) {
        s.start_ns = 1'000'000 + s.start_ns * 5 / 4;  // a later origin, as a real trace has
        s.duration_ns = s.duration_ns * 5 / 4;
      }
    }
    EXPECT_TRUE(db->append_timeline(run_id, measured).ok());
    measured_step_s = predicted->iteration_s * 1.25;
    store::RunSummary summary;
    summary.step_time_s = measured_step_s;
    summary.memory_bytes = {{"weights", 1 << 20}, {"activations", 4 << 20}, {"total", 8 << 20}};
    summary.metrics["hardware_profile_id"] = static_cast<double>(*profile_id);
    EXPECT_TRUE(db->update_summary(run_id, summary).ok());
  }
};

bool wait_comparison(ComparePage& page) {
  QSignalSpy spy(&page, &ComparePage::comparisonReady);
  return spy.wait(30000);
}

TEST(ComparePage, ShowsPhasesMemoryAndBothTimelinesOfAProbeRun) {
  ProbeStore fixture(true);
  RunRepository runs(fixture.path);
  PlanDocument document;
  ComparePage page(&runs, &document);
  page.resize(1200, 800);
  ModelTesterWarnings warnings;
  QAbstractItemModelTester phase_tester(page.phaseModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  QAbstractItemModelTester memory_tester(page.memoryModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  runs.refresh();
  ASSERT_TRUE(wait_comparison(page));
  EXPECT_FALSE(page.showsEmptyHint());
  ASSERT_EQ(page.runPicker()->count(), 1);
  ASSERT_TRUE(page.comparison());
  ASSERT_TRUE(page.comparison()->error.isEmpty()) << page.comparison()->error.toStdString();

  const auto* phases = page.phaseModel();
  ASSERT_GE(phases->rowCount(), 6);
  QStringList names;
  for (int r = 0; r < phases->rowCount(); ++r) names << phases->index(r, ComparisonModel::kName).data().toString();
  for (const char* n : {"forward", "backward", "communication", "idle", "optimizer", "step"}) {
    EXPECT_TRUE(names.contains(QString::fromLatin1(n))) << n;
  }
  const int step = static_cast<int>(names.indexOf(QStringLiteral("step")));
  EXPECT_NEAR(phases->index(step, ComparisonModel::kMeasured).data(Qt::UserRole).toDouble(), fixture.measured_step_s, 1e-12);
  EXPECT_NEAR(phases->index(step, ComparisonModel::kError).data(Qt::UserRole).toDouble(), 1 / 1.25 - 1, 1e-9);
  const int forward = static_cast<int>(names.indexOf(QStringLiteral("forward")));
  EXPECT_NEAR(phases->index(forward, ComparisonModel::kError).data(Qt::UserRole).toDouble(), 1 / 1.25 - 1, 0.01)
      << "the measured trace is the prediction stretched by 1.25";
  EXPECT_TRUE(phases->index(forward, ComparisonModel::kError).data().toString().startsWith(QLatin1Char('-')));

  ASSERT_EQ(page.memoryModel()->rowCount(), 7);
  EXPECT_EQ(page.memoryModel()->index(6, ComparisonModel::kName).data().toString(), QStringLiteral("total"));
  EXPECT_EQ(page.memoryModel()->index(0, ComparisonModel::kMeasured).data(Qt::UserRole).toDouble(), double(1 << 20));

  // Both timelines start at 0 and share one extent; zooming one moves the other.
  ASSERT_TRUE(page.predictedView()->timeline() && page.measuredView()->timeline());
  EXPECT_EQ(page.predictedView()->timeline()->begin_ns(), 0);
  EXPECT_EQ(page.measuredView()->timeline()->begin_ns(), 0);
  EXPECT_EQ(page.predictedView()->timeline()->end_ns(), page.measuredView()->timeline()->end_ns());
  page.predictedView()->zoomBy(4, page.predictedView()->plotWidth() / 3);
  EXPECT_EQ(page.measuredView()->axis().begin_ns, page.predictedView()->axis().begin_ns);
  EXPECT_EQ(page.measuredView()->axis().end_ns, page.predictedView()->axis().end_ns);
  EXPECT_EQ(page.sharedAxis()->axis().end_ns, page.predictedView()->axis().end_ns);
  page.measuredView()->fitAll();
  EXPECT_EQ(page.predictedView()->axis().begin_ns, 0);
  EXPECT_EQ(page.predictedView()->axis().end_ns, page.predictedView()->timeline()->end_ns());

  // Per layer: the same prediction on the same axis, each of the 2 layers per stage with its TP
  // all-reduces (TP 2) as spans of their own; off again, the ops.
  const auto ops = page.predictedView()->timeline();
  page.setPerLayer(true);
  const auto layered = page.predictedView()->timeline();
  ASSERT_TRUE(layered);
  EXPECT_NE(layered, ops);
  EXPECT_GT(layered->span_count(), ops->span_count());
  EXPECT_EQ(layered->begin_ns(), 0);
  EXPECT_EQ(layered->end_ns(), page.measuredView()->timeline()->end_ns());
  std::size_t all_reduces = 0;
  for (const auto& track : layered->timeline().tracks) {
    for (const auto& s : track.spans) {
      all_reduces += s.stage == 1 && s.micro_batch == 0 &&
                     layered->timeline().name_of(s).find("TP all-reduce") != std::string::npos;
    }
  }
  EXPECT_GE(all_reduces, 2u * 2 * 2) << "2 layers x 2 blocks x (forward, backward)";
  page.setPerLayer(false);
  EXPECT_EQ(page.predictedView()->timeline(), ops);
  EXPECT_EQ(warnings.count(), 0);
}

TEST(ComparePage, WithoutAProbeRunSaysHowToMakeOne) {
  ProbeStore fixture(false);
  RunRepository runs(fixture.path);
  PlanDocument document;
  ComparePage page(&runs, &document);
  QSignalSpy spy(&runs, &RunRepository::runsChanged);
  runs.refresh();
  ASSERT_TRUE(spy.wait(20000));
  EXPECT_TRUE(page.showsEmptyHint());
  EXPECT_EQ(page.runPicker()->count(), 0);
  auto* hint = page.findChild<QLabel*>(QStringLiteral("noProbeRuns"));
  ASSERT_TRUE(hint);
  EXPECT_TRUE(hint->text().contains(QStringLiteral("plansight probe --model small --steps 10")));
}

est::Plan two_gpu_plan() {
  est::Plan plan = est::default_plan();
  plan.model = *est::find_model("gpt3-1.3b");
  plan.cluster.gpus = 2;
  plan.cluster.gpus_per_node = 2;
  plan.layout = {};
  plan.layout.tp = 2;
  plan.training.micro_batch = 1;
  plan.training.global_batch = 4;
  plan.training.seq_len = 2048;
  return plan;
}

TEST(ComparePage, AnImportedTraceBesideTheCurrentPlanHasTheCliNumbers) {
  QTemporaryDir dir;
  const std::string db = dir.filePath(QStringLiteral("runs.sqlite")).toStdString();
  auto imported = testing::run_cli({"import", PLANSIGHT_TEST_DATA_DIR "/traces/kineto_multirank", "--db", db});
  ASSERT_EQ(imported.status, cli::Status::ok) << imported.err;
  const std::string plan_file = dir.filePath(QStringLiteral("plan.json")).toStdString();
  std::ofstream(plan_file) << est::to_json(two_gpu_plan()).dump();
  auto cli = testing::run_cli({"compare", "1", "--plan", plan_file, "--json", "--db", db});
  ASSERT_EQ(cli.status, cli::Status::ok) << cli.err;
  const auto j = nlohmann::json::parse(cli.out);

  RunRepository runs(QString::fromStdString(db));
  PlanDocument document;
  document.replacePlan(two_gpu_plan());
  ASSERT_TRUE(test::wait_idle(document));
  ComparePage page(&runs, &document);
  page.resize(1200, 800);
  ModelTesterWarnings warnings;
  QAbstractItemModelTester tester(page.phaseModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  runs.refresh();
  ASSERT_TRUE(wait_comparison(page));
  ASSERT_EQ(page.runPicker()->count(), 1) << "an import is listed";
  EXPECT_EQ(page.against(), ComparePage::Against::current_plan) << "an import has no configuration of its own";
  ASSERT_TRUE(page.comparison() && page.comparison()->error.isEmpty()) << page.titleText().toStdString();
  EXPECT_TRUE(page.comparison()->against_plan);
  EXPECT_TRUE(page.titleText().contains(QStringLiteral("imported timeline"))) << page.titleText().toStdString();

  // Every phase row and the step row: the CLI's numbers.
  const auto* m = page.phaseModel();
  ASSERT_EQ(m->rowCount(), static_cast<int>(j["phases"].size()) + 1);
  for (int r = 0; r + 1 < m->rowCount(); ++r) {
    const auto& row = j["phases"][static_cast<std::size_t>(r)];
    EXPECT_EQ(m->index(r, ComparisonModel::kName).data().toString().toStdString(), row["phase"].get<std::string>());
    EXPECT_DOUBLE_EQ(m->index(r, ComparisonModel::kPredicted).data(Qt::UserRole).toDouble(), row["predicted_s"].get<double>());
    EXPECT_DOUBLE_EQ(m->index(r, ComparisonModel::kMeasured).data(Qt::UserRole).toDouble(), row["measured_s"].get<double>());
    const QVariant error = m->index(r, ComparisonModel::kError).data(Qt::UserRole);
    if (row["error"].is_null()) EXPECT_FALSE(error.isValid()) << r;
    else EXPECT_DOUBLE_EQ(error.toDouble(), row["error"].get<double>());
  }
  const int step = m->rowCount() - 1;
  EXPECT_EQ(m->index(step, ComparisonModel::kName).data().toString(), QStringLiteral("step"));
  EXPECT_DOUBLE_EQ(m->index(step, ComparisonModel::kPredicted).data(Qt::UserRole).toDouble(), j["step"]["predicted_s"].get<double>());
  EXPECT_DOUBLE_EQ(m->index(step, ComparisonModel::kMeasured).data(Qt::UserRole).toDouble(), j["step"]["measured_s"].get<double>());
  EXPECT_EQ(page.memoryModel()->rowCount(), 0) << "a trace measures no memory";

  // Predicted above measured, both from 0 on one extent: the longer of the two.
  ASSERT_TRUE(page.predictedView()->timeline() && page.measuredView()->timeline());
  EXPECT_EQ(page.predictedView()->timeline()->begin_ns(), 0);
  EXPECT_EQ(page.measuredView()->timeline()->begin_ns(), 0);
  EXPECT_EQ(page.predictedView()->timeline()->end_ns(), page.measuredView()->timeline()->end_ns());
  EXPECT_EQ(page.measuredView()->timeline()->timeline().source, est::TimelineSource::imported);
  EXPECT_NEAR(static_cast<double>(page.predictedView()->timeline()->end_ns()) * 1e-9,
              std::max(j["predicted_window_s"].get<double>(), j["traced_window_s"].get<double>()), 1e-9);

  // Editing the plan re-predicts: TP 1 on one GPU is slower per step than TP 2 on two.
  const double before = m->index(step, ComparisonModel::kPredicted).data(Qt::UserRole).toDouble();
  est::Plan one = two_gpu_plan();
  one.cluster.gpus = 1;
  one.cluster.gpus_per_node = 1;
  one.layout.tp = 1;
  QSignalSpy again(&page, &ComparePage::comparisonReady);
  document.editPlan(one);
  page.show();  // hidden pages compare again when shown
  ASSERT_TRUE(again.wait(30000));
  ASSERT_TRUE(page.comparison()->error.isEmpty()) << page.comparison()->error.toStdString();
  EXPECT_GT(m->index(m->rowCount() - 1, ComparisonModel::kPredicted).data(Qt::UserRole).toDouble(), before);
  EXPECT_EQ(warnings.count(), 0);
}

TEST(ComparePage, AProbeRunCanAlsoBeSetBesideThePlan) {
  ProbeStore fixture(true);
  RunRepository runs(fixture.path);
  PlanDocument document;
  document.replacePlan(two_gpu_plan());
  ASSERT_TRUE(test::wait_idle(document));
  ComparePage page(&runs, &document);
  runs.refresh();
  ASSERT_TRUE(wait_comparison(page));
  EXPECT_EQ(page.against(), ComparePage::Against::own_configuration) << "a probe run starts on its own configuration";
  EXPECT_FALSE(page.comparison()->against_plan);
  QSignalSpy ready(&page, &ComparePage::comparisonReady);
  page.setAgainst(ComparePage::Against::current_plan);
  ASSERT_TRUE(ready.wait(30000));
  ASSERT_TRUE(page.comparison()->error.isEmpty()) << page.comparison()->error.toStdString();
  EXPECT_TRUE(page.comparison()->against_plan);
  EXPECT_EQ(page.memoryModel()->rowCount(), 7) << "the probe measured memory";
  EXPECT_EQ(page.memoryModel()->index(0, ComparisonModel::kMeasured).data(Qt::UserRole).toDouble(), double(1 << 20));
  auto e = est::estimate(two_gpu_plan());
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(page.phaseModel()->index(page.phaseModel()->rowCount() - 1, ComparisonModel::kPredicted).data(Qt::UserRole).toDouble(),
                   e->time.iteration_s);
  EXPECT_DOUBLE_EQ(page.phaseModel()->index(page.phaseModel()->rowCount() - 1, ComparisonModel::kMeasured).data(Qt::UserRole).toDouble(),
                   fixture.measured_step_s);
  // The probe ran the 4-layer "small" model; the plan is GPT-3 1.3B: the page says so above the
  // numbers instead of showing a four-digit error without a word.
  ASSERT_FALSE(page.comparison()->warnings.isEmpty());
  EXPECT_TRUE(page.comparison()->warnings.front().contains(QStringLiteral("the run and the plan differ")))
      << page.comparison()->warnings.front().toStdString();
  auto* warning = page.findChild<QLabel*>(QStringLiteral("compareWarning"));
  ASSERT_NE(warning, nullptr);
  EXPECT_FALSE(warning->isHidden());
  EXPECT_TRUE(warning->text().contains(QStringLiteral("layers 4 vs")));
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("compareNote"))->text().contains(QStringLiteral("of step =")));
  // Its own configuration is the same job: no warning.
  page.setAgainst(ComparePage::Against::own_configuration);
  ASSERT_TRUE(ready.wait(30000));
  EXPECT_TRUE(page.comparison()->warnings.isEmpty());
  EXPECT_TRUE(warning->isHidden());
}

TEST(ComparisonModel, PassesTheModelTesterAndFormatsErrors) {
  ModelTesterWarnings warnings;
  ComparisonModel model(ComparisonModel::Unit::seconds);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  model.setRows({{QStringLiteral("forward"), 1.1, 1.0, true}, {QStringLiteral("idle"), 0.5, 0, true},
                 {QStringLiteral("step"), 2, 0, false}});
  EXPECT_EQ(model.index(0, ComparisonModel::kError).data().toString(), QStringLiteral("+10.0%"));
  EXPECT_EQ(model.index(1, ComparisonModel::kError).data().toString(), QStringLiteral("-")) << "nothing measured";
  EXPECT_EQ(model.index(2, ComparisonModel::kMeasured).data().toString(), QStringLiteral("-"));
  // A phase under 5% of its 10 ms step: no relative error, only its share of the step.
  ComparisonRow tiny{QStringLiteral("communication"), 0.0, 1e-5, true, 1e-2};
  model.setRows({tiny});
  EXPECT_EQ(model.index(0, ComparisonModel::kError).data().toString(), QStringLiteral("-"));
  EXPECT_EQ(model.index(0, ComparisonModel::kOfStep).data().toString(), QStringLiteral("-0.1%"));
  model.setRows({});
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(warnings.count(), 0);
}

}  // namespace
}  // namespace plansight::gui
