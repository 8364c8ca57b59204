// The Compare page over a temporary store holding a probe run made here through the store API
// (request, hardware profile, summary, and a "measured" timeline: the prediction stretched by
// 1.25): the phase table shows forward … step with errors, memory per category, both timelines
// on one axis that zooms together; an empty store shows how to make a probe run. An imported
// Kineto fixture beside the current plan's prediction gives the numbers of `plansight compare
// RUN --plan FILE --json` and follows the plan's edits. A GPU probe run (bf16 on an H200, its
// measured kernels 70% tensor-core GEMMs) shows its device, tokens/s and MFU as `plansight
// compare RUN --json` gives them and the tensor-core share predicted vs measured; a CPU run shows
// neither tensor-core rows nor an MFU. The models under QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <fstream>

#include "../support/cli_run.h"
#include "gui_test_support.h"
#include "plansight/core/predicted_gemm_share.h"
#include "plansight/core/probe_plan.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/gui/compare_page.h"
#include "plansight/gui/comparison_model.h"
#include "plansight/gui/figure_model.h"
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
  double measured_tensor_core_share = 0;  // GPU: of the measured kernel and collective time
  nlohmann::json request;
  est::HardwareProfile profile;

  // `on_gpu`: a bf16 run on an H200 whose measured compute kernels are each split 70:30 into a
  // cuBLAS tensor-core GEMM and a layernorm, with the device report the CUDA probe writes.
  // `probe_names`: the CPU run's forward compute spans named "qkv" and its backward ones "gelu", as
  // the CPU probe names its spans after its operators, each with a thread CPU time of half its
  // duration (waiting for a core the rest).
  // `kernel_operators` (with on_gpu): each forward compute kernel carries the operator "qkv" and
  // each backward one "gelu" (Span::operator_id), as the CUPTI timeline has them from the NVTX
  // ranges that launched them.
  explicit ProbeStore(bool with_probe_run, bool on_gpu = false, bool probe_names = false, bool kernel_operators = false) {
    auto db = store::Store::open(path.toStdString());
    EXPECT_TRUE(db.ok()) << db.error_text();
    if (!with_probe_run) {
      store::NewRun plan_run{store::RunKind::plan, "a plan", "", store::RunStatus::complete, std::nullopt, ""};
      EXPECT_TRUE(db->create_run(plan_run).ok());
      return;
    }
    request = {
        {"model", {{"name", "small"}, {"layers", 4}, {"hidden", 128}, {"heads", 4}, {"kv_heads", 4},
                   {"ffn_hidden", 512}, {"vocab", 256}, {"max_seq_len", 128}, {"dropout", false}}},
        {"layout", {{"tp", 2}, {"pp", 2}, {"dp", 1}, {"schedule", "1f1b"}}},
        {"micro_batch", 1}, {"global_batch", 4}, {"seq_len", 128}, {"steps", 10}};
    if (on_gpu) {
      request["device"] = "cuda";
      request["precision"] = "bf16";
    }
    profile.device = on_gpu ? "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)" : "cpu: test";
    profile.peak_flops = 5e10;
    profile.memory_bandwidth_bytes_per_s = 1e10;
    profile.collectives.push_back({est::Collective::all_reduce, 2, 1 << 20, 1e-3, false});
    auto profile_id = db->save_hardware_profile(profile.device, est::to_json(profile));
    EXPECT_TRUE(profile_id.ok()) << profile_id.error_text();
    store::NewRun run{store::RunKind::probe, "probe small", on_gpu ? "cuda: " + profile.device : "cpu: test",
                      store::RunStatus::complete, request, ""};
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
    if (on_gpu) split_kernels(measured);
    if (probe_names) by_operator(measured, true);
    if (kernel_operators) by_operator(measured, false);
    EXPECT_TRUE(db->append_timeline(run_id, measured).ok());
    measured_step_s = predicted->iteration_s * 1.25;
    store::RunSummary summary;
    summary.step_time_s = measured_step_s;
    summary.memory_bytes = {{"weights", 1 << 20}, {"activations", 4 << 20}, {"total", 8 << 20}};
    summary.metrics["hardware_profile_id"] = static_cast<double>(*profile_id);
    if (on_gpu) {
      // The probe's own figure, deliberately not the timeline's, to see which the page shows.
      summary.device = {{"gpu", "NVIDIA H200"}, {"compute_capability", "9.0"}, {"precision", "bf16"},
                        {"tensor_cores", {{"source", "kernel-name rules"},
                                          {"step", {{"seconds", 1.0}, {"tensor_core_seconds", 0.65}, {"share", 0.65}}}}}};
    }
    EXPECT_TRUE(db->update_summary(run_id, summary).ok());
  }

  // Forward compute kernels become the operator "qkv", backward ones "gelu": as the CPU probe
  // names its spans (their name, and a thread CPU time of half the span) or, `as_names` false,
  // as a GPU run's kernels carry the operator that launched them (Span::operator_id).
  void by_operator(est::Timeline& t, bool as_names) {
    const std::int32_t qkv = t.intern("qkv"), gelu = t.intern("gelu");
    for (auto& track : t.tracks) {
      for (auto& s : track.spans) {
        if (track.lane != est::Lane::compute || s.kind != est::SpanKind::kernel) continue;
        std::int32_t& id = as_names ? s.name_id : s.operator_id;
        if (s.phase == est::Phase::forward) id = qkv;
        if (s.phase == est::Phase::backward) id = gelu;
        if (as_names) s.cpu_ns = s.duration_ns / 2;
      }
    }
  }

  // Each forward and backward kernel: 70% a flagged cuBLAS GEMM, then 30% a layernorm.
  void split_kernels(est::Timeline& t) {
    const std::int32_t gemm = t.intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas");
    const std::int32_t other = t.intern("layernorm_forward_kernel");
    double kernel_ns = 0, tensor_core_ns = 0;
    for (auto& track : t.tracks) {
      std::vector<est::Span> spans;
      for (const est::Span& s : track.spans) {
        const bool compute = s.kind == est::SpanKind::kernel && (s.phase == est::Phase::forward || s.phase == est::Phase::backward);
        if (s.kind == est::SpanKind::kernel || s.kind == est::SpanKind::collective) kernel_ns += static_cast<double>(s.duration_ns);
        if (!compute) {
          spans.push_back(s);
          continue;
        }
        est::Span a = s, b = s;
        a.duration_ns = s.duration_ns * 7 / 10;
        a.name_id = gemm;
        a.tensor_core = true;
        b.start_ns = a.end_ns();
        b.duration_ns = s.duration_ns - a.duration_ns;
        b.name_id = other;
        tensor_core_ns += static_cast<double>(a.duration_ns);
        spans.push_back(a);
        spans.push_back(b);
      }
      track.spans = std::move(spans);
    }
    measured_tensor_core_share = tensor_core_ns / kernel_ns;
  }
};

bool wait_comparison(ComparePage& page) {
  QSignalSpy spy(&page, &ComparePage::comparisonReady);
  return spy.wait(30000);
}

// A Compare page over `fixture`'s runs at the tests' size, its first comparison awaited
// (`ready`: whether it came).
struct OpenComparePage {
  explicit OpenComparePage(const ProbeStore& fixture) : runs(fixture.path), page(&runs, &document) {
    page.resize(1400, 1000);
    runs.refresh();
    ready = wait_comparison(page);
  }
  RunRepository runs;
  PlanDocument document;
  ComparePage page;
  bool ready = false;
};

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

// The row of `model` named `name`, -1 when none is.
int row_named(const FigureModel& model, const QString& name) {
  for (int r = 0; r < model.rowCount(); ++r) {
    if (model.index(r, FigureModel::kName).data().toString() == name) return r;
  }
  return -1;
}

double raw(const FigureModel& model, int row, int column) { return model.index(row, column).data(Qt::UserRole).toDouble(); }

// The page's figures as text, and a screenshot, where PLANSIGHT_GUI_SHOTS names a folder: to
// look at, not to check.
void save_figures(ComparePage& page, const QString& name) {
  const QString dir = qEnvironmentVariable("PLANSIGHT_GUI_SHOTS");
  if (dir.isEmpty()) return;
  page.grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
  std::ofstream out((dir + QLatin1Char('/') + name + QStringLiteral(".txt")).toStdString());
  out << page.titleText().toStdString() << "\n" << page.findChild<QLabel*>(QStringLiteral("compareDevice"))->text().toStdString() << "\n";
  for (const FigureModel* m : {page.throughputModel(), page.tensorCoreModel()}) {
    out << "\n";
    for (int c = 0; c < FigureModel::kColumnCount; ++c) out << m->headerData(c, Qt::Horizontal).toString().toStdString() << " | ";
    out << "\n";
    for (int r = 0; r < m->rowCount(); ++r) {
      for (int c = 0; c < FigureModel::kColumnCount; ++c) out << m->index(r, c).data().toString().toStdString() << " | ";
      out << "\n";
    }
  }
  const auto* note = page.findChild<QLabel*>(QStringLiteral("tensorCoreNote"));
  out << "\n" << page.findChild<QLabel*>(QStringLiteral("throughputNote"))->text().toStdString() << "\n"
      << note->text().toStdString() << "\ntooltip: " << note->toolTip().toStdString() << "\n";
}

TEST(ComparePage, AGpuRunShowsItsDeviceThroughputAndTensorCores) {
  ProbeStore fixture(true, true);
  auto cli = testing::run_cli({"compare", std::to_string(fixture.run_id), "--json", "--db", fixture.path.toStdString()});
  ASSERT_EQ(cli.status, cli::Status::ok) << cli.err;
  const auto j = nlohmann::json::parse(cli.out)["throughput"];
  ASSERT_FALSE(j["measured_mfu"].is_null()) << "an H200 has a datasheet peak";

  RunRepository runs(fixture.path);
  PlanDocument document;
  ComparePage page(&runs, &document);
  page.resize(1400, 1000);
  ModelTesterWarnings warnings;
  QAbstractItemModelTester throughput_tester(page.throughputModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  QAbstractItemModelTester tensor_core_tester(page.tensorCoreModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  runs.refresh();
  ASSERT_TRUE(wait_comparison(page));
  ASSERT_TRUE(page.comparison() && page.comparison()->error.isEmpty()) << page.titleText().toStdString();

  const QString device = page.findChild<QLabel*>(QStringLiteral("compareDevice"))->text();
  EXPECT_TRUE(device.contains(QStringLiteral("NVIDIA H200")) && device.contains(QStringLiteral("bf16"))) << device.toStdString();

  // Tokens/s and MFU: the CLI's numbers.
  const FigureModel& t = *page.throughputModel();
  ASSERT_EQ(t.rowCount(), 2);
  const int tokens = row_named(t, QStringLiteral("tokens/s")), mfu = row_named(t, QStringLiteral("MFU"));
  ASSERT_GE(tokens, 0);
  ASSERT_GE(mfu, 0);
  EXPECT_DOUBLE_EQ(raw(t, tokens, FigureModel::kPredicted), j["predicted_tokens_per_s"].get<double>());
  EXPECT_DOUBLE_EQ(raw(t, tokens, FigureModel::kMeasured), j["measured_tokens_per_s"].get<double>());
  EXPECT_DOUBLE_EQ(raw(t, mfu, FigureModel::kPredicted), j["predicted_mfu"].get<double>());
  EXPECT_DOUBLE_EQ(raw(t, mfu, FigureModel::kMeasured), j["measured_mfu"].get<double>());
  EXPECT_TRUE(t.index(mfu, FigureModel::kMeasured).data().toString().endsWith(QLatin1Char('%')));
  EXPECT_NEAR(raw(t, tokens, FigureModel::kDifference), 0.25, 1e-9) << "the measured step is 1.25 x the predicted";
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("throughputNote"))->text().contains(QStringLiteral("h200 datasheet, bf16")));

  // Tensor cores: measured as the timeline's kernels say (70% of forward and backward), predicted
  // as the operator model's GEMM share of each phase.
  const FigureModel& tc = *page.tensorCoreModel();
  EXPECT_TRUE(page.findChild<QWidget*>(QStringLiteral("tensorCoreTable"))->isVisibleTo(&page));
  const int step = row_named(tc, QStringLiteral("step")), forward = row_named(tc, QStringLiteral("forward")),
            gemms = row_named(tc, QStringLiteral("in tensor-core GEMMs"));
  ASSERT_EQ(step, 0);
  ASSERT_GE(forward, 0);
  ASSERT_GE(gemms, 0);
  EXPECT_GE(row_named(tc, QStringLiteral("backward")), 0);
  EXPECT_NEAR(raw(tc, step, FigureModel::kMeasured), fixture.measured_tensor_core_share, 1e-9)
      << "the stored timeline's figure, not the probe's 65%";
  EXPECT_NEAR(raw(tc, forward, FigureModel::kMeasured), 0.7, 1e-3);
  EXPECT_NEAR(raw(tc, gemms, FigureModel::kMeasured), fixture.measured_tensor_core_share, 1e-9)
      << "the GEMMs' part of the kernel time is the step's tensor-core share";
  auto plan = core::plan_of_probe_run(fixture.request, fixture.profile);
  ASSERT_TRUE(plan.ok()) << plan.error_text();
  auto gemm = core::predicted_gemm_shares(*plan, &fixture.profile);
  ASSERT_TRUE(gemm.ok()) << gemm.error_text();
  EXPECT_NEAR(raw(tc, forward, FigureModel::kPredicted), gemm->forward, 1e-12);
  EXPECT_GT(raw(tc, step, FigureModel::kPredicted), 0.1);
  EXPECT_LT(raw(tc, step, FigureModel::kPredicted), 1);
  EXPECT_NEAR(raw(tc, forward, FigureModel::kDifference), gemm->forward - raw(tc, forward, FigureModel::kMeasured), 1e-12);
  EXPECT_TRUE(tc.index(forward, FigureModel::kDifference).data().toString().endsWith(QStringLiteral(" pt")));
  const auto* note = page.findChild<QLabel*>(QStringLiteral("tensorCoreNote"));
  EXPECT_TRUE(note->text().contains(QStringLiteral("65.0% (kernel-name rules)")) && note->text().contains(QStringLiteral("stored timeline")))
      << note->text().toStdString();
  EXPECT_TRUE(note->toolTip().contains(QStringLiteral("device report"))) << "where the probe's own figure came from";
  EXPECT_TRUE(tc.index(step, FigureModel::kName).data(Qt::ToolTipRole).toString().contains(QStringLiteral("the probe's own figure")));
  save_figures(page, QStringLiteral("compare_gpu"));
  EXPECT_EQ(warnings.count(), 0);
}

TEST(ComparePage, ACpuRunHasNoTensorCoreRowsAndNoMfu) {
  ProbeStore fixture(true);
  OpenComparePage open(fixture);
  ComparePage& page = open.page;
  ASSERT_TRUE(open.ready);
  ASSERT_TRUE(page.comparison() && page.comparison()->error.isEmpty()) << page.titleText().toStdString();
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("compareDevice"))->text().contains(QStringLiteral("cpu: test · fp32")));
  EXPECT_EQ(page.tensorCoreModel()->rowCount(), 0);
  EXPECT_FALSE(page.findChild<QWidget*>(QStringLiteral("tensorCoreTable"))->isVisibleTo(&page));
  ASSERT_EQ(page.throughputModel()->rowCount(), 1) << "tokens/s only: no MFU row with a made-up peak";
  EXPECT_EQ(page.throughputModel()->index(0, FigureModel::kName).data().toString(), QStringLiteral("tokens/s"));
  EXPECT_GT(raw(*page.throughputModel(), 0, FigureModel::kMeasured), 0);
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("throughputNote"))->text().startsWith(QStringLiteral("no MFU")));
  save_figures(page, QStringLiteral("compare_cpu"));

  // Against a plan the CLI prints no throughput either: the boxes go.
  QSignalSpy ready(&page, &ComparePage::comparisonReady);
  page.setAgainst(ComparePage::Against::current_plan);
  ASSERT_TRUE(ready.wait(30000));
  EXPECT_EQ(page.throughputModel()->rowCount(), 0);
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("compareDevice"))->isHidden());
}

// A CPU run whose spans are the probe's operators shows them per operator, as `plansight
// compare RUN --operators` does: the measured side sums the spans' thread CPU clocks (half of
// each span here); operators the run did not trace show no measurement. Runs whose spans are not
// the probe's (the fixture's own) show no operator table.
TEST(ComparePage, ACpuRunShowsItsOperatorsAsProcessorTime) {
  ProbeStore fixture(true, false, true);
  RunRepository runs(fixture.path);
  PlanDocument document;
  ComparePage page(&runs, &document);
  page.resize(1400, 1000);
  ModelTesterWarnings warnings;
  QAbstractItemModelTester tester(page.operatorModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
  runs.refresh();
  ASSERT_TRUE(wait_comparison(page));
  ASSERT_TRUE(page.comparison() && page.comparison()->error.isEmpty()) << page.titleText().toStdString();
  const ComparisonModel& ops = *page.operatorModel();
  ASSERT_GT(ops.rowCount(), 10);
  EXPECT_EQ(ops.headerData(ComparisonModel::kName, Qt::Horizontal).toString(), QStringLiteral("Operator"));
  double forward_measured = 0;
  int measured_rows = 0;
  for (int r = 0; r < ops.rowCount(); ++r) {
    const QString name = ops.index(r, ComparisonModel::kName).data().toString();
    EXPECT_GT(ops.index(r, ComparisonModel::kPredicted).data(Qt::UserRole).toDouble(), 0) << name.toStdString();
    const bool measured = ops.rows()[static_cast<std::size_t>(r)].has_measured;
    measured_rows += measured ? 1 : 0;
    if (name == QStringLiteral("qkv forward")) forward_measured = ops.rows()[static_cast<std::size_t>(r)].measured;
  }
  EXPECT_EQ(measured_rows, 2) << "qkv forward and gelu backward";
  // Half of every forward compute span of the measured timeline.
  double half = 0;
  for (const auto& track : page.comparison()->measured->timeline().tracks) {
    for (const auto& s : track.spans) {
      if (track.lane == est::Lane::compute && s.kind == est::SpanKind::kernel && s.phase == est::Phase::forward) {
        half += static_cast<double>(s.duration_ns / 2) * 1e-9;
      }
    }
  }
  EXPECT_NEAR(forward_measured, half, 1e-12);
  EXPECT_TRUE(page.findChild<QWidget*>(QStringLiteral("operatorTable"))->isVisibleTo(&page));
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("operatorNote"))->text().contains(QStringLiteral("thread CPU clock")));
  EXPECT_EQ(warnings.count(), 0);
  save_figures(page, QStringLiteral("compare_cpu_operators"));

  ProbeStore plain(true);
  RunRepository plain_runs(plain.path);
  ComparePage plain_page(&plain_runs, &document);
  plain_runs.refresh();
  ASSERT_TRUE(wait_comparison(plain_page));
  EXPECT_EQ(plain_page.operatorModel()->rowCount(), 0);
  EXPECT_FALSE(plain_page.findChild<QWidget*>(QStringLiteral("operatorTable"))->isVisibleTo(&plain_page));
}

// A GPU run whose kernels carry the operator that launched them shows the operators too, as GPU
// time: each row sums its kernels' durations (no thread CPU clock on a GPU kernel), and the note
// says so. A GPU run without operators (traced before they were kept) shows no table.
TEST(ComparePage, AGpuRunShowsItsOperatorsAsGpuTime) {
  ProbeStore fixture(true, true, false, true);
  OpenComparePage open(fixture);
  ComparePage& page = open.page;
  ASSERT_TRUE(open.ready);
  ASSERT_TRUE(page.comparison() && page.comparison()->error.isEmpty()) << page.titleText().toStdString();
  const ComparisonModel& ops = *page.operatorModel();
  ASSERT_GT(ops.rowCount(), 10);
  double forward_measured = -1;
  for (int r = 0; r < ops.rowCount(); ++r) {
    if (ops.index(r, ComparisonModel::kName).data().toString() == QStringLiteral("qkv forward")) {
      forward_measured = ops.rows()[static_cast<std::size_t>(r)].measured;
    }
  }
  double durations = 0;
  for (const auto& track : page.comparison()->measured->timeline().tracks) {
    for (const auto& s : track.spans) {
      if (track.lane == est::Lane::compute && s.kind == est::SpanKind::kernel && s.phase == est::Phase::forward) {
        durations += static_cast<double>(s.duration_ns) * 1e-9;
      }
    }
  }
  EXPECT_GT(durations, 0);
  EXPECT_NEAR(forward_measured, durations, 1e-12) << "every forward kernel's whole duration";
  EXPECT_TRUE(page.findChild<QWidget*>(QStringLiteral("operatorTable"))->isVisibleTo(&page));
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("operatorNote"))->text().contains(QStringLiteral("GPU time")));
  save_figures(page, QStringLiteral("compare_gpu_operators"));

  ProbeStore untagged(true, true);
  OpenComparePage untagged_page(untagged);
  ASSERT_TRUE(untagged_page.ready);
  EXPECT_EQ(untagged_page.page.operatorModel()->rowCount(), 0);
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
  // Every phase row and the step stay in view however long the legend is: the table asks for
  // their height (the legend scrolls instead).
  auto* phases = page.findChild<QTableView*>(QStringLiteral("phaseTable"));
  ASSERT_NE(phases, nullptr);
  int rows_height = phases->horizontalHeader()->sizeHint().height();
  for (int r = 0; r < page.phaseModel()->rowCount(); ++r) rows_height += phases->rowHeight(r);
  EXPECT_GE(phases->minimumHeight(), rows_height);
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
