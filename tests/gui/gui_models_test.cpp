// Every item model of the GUI under QAbstractItemModelTester, through resets to empty and back,
// and its numbers checked against the estimate it shows.
#include <gtest/gtest.h>

#include "gui_test_support.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/breakdown_model.h"
#include "plansight/gui/theme.h"
#include "plansight/gui/diagnostic_model.h"
#include "plansight/gui/format.h"
#include "plansight/gui/memory_model.h"
#include "plansight/gui/preset_model.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;
using test::ModelTesterWarnings;

est::Estimate default_estimate() {
  auto e = est::estimate(est::default_plan());
  EXPECT_TRUE(e.ok()) << e.error_text();
  return *e;
}

TEST(PresetModel, PassesTheModelTesterAndListsEveryPreset) {
  ModelTesterWarnings warnings;
  std::unique_ptr<PresetModel> models(PresetModel::models(nullptr));
  std::unique_ptr<PresetModel> gpus(PresetModel::gpus(nullptr));
  std::unique_ptr<PresetModel> systems(PresetModel::systems(nullptr));
  for (PresetModel* m : {models.get(), gpus.get(), systems.get()}) {
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::Warning);
    m->setEntries({});
    m->setEntries({{QStringLiteral("a"), QStringLiteral("tip a")}, {QStringLiteral("b"), QString()}});
    EXPECT_EQ(m->rowCount(), 2);
    EXPECT_EQ(m->rowOf(QStringLiteral("B")), 1);
  }
  EXPECT_EQ(warnings.count(), 0);
  std::unique_ptr<PresetModel> fresh(PresetModel::models(nullptr));
  EXPECT_EQ(fresh->rowCount(), static_cast<int>(est::model_presets().size()));
  const int row = fresh->rowOf(QStringLiteral("gpt3-175b"));
  ASSERT_GE(row, 0);
  EXPECT_TRUE(fresh->index(row).data(Qt::ToolTipRole).toString().contains(QStringLiteral("96 layers")));
}

TEST(MemoryModel, PassesTheModelTesterAndShowsTheEstimate) {
  ModelTesterWarnings warnings;
  MemoryModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  const est::Estimate e = default_estimate();
  model.setMemory(e.memory);
  ASSERT_EQ(model.rowCount(), static_cast<int>(e.memory.stages.size()));
  EXPECT_EQ(model.columnCount(), MemoryModel::ColumnCount);
  for (int r = 0; r < model.rowCount(); ++r) {
    const auto& stage = e.memory.stages[static_cast<std::size_t>(r)];
    EXPECT_DOUBLE_EQ(model.index(r, MemoryModel::TotalColumn).data(MemoryModel::ValueRole).toDouble(), stage.memory.total_bytes());
    EXPECT_DOUBLE_EQ(model.index(r, MemoryModel::FirstPartColumn + 3).data(MemoryModel::ValueRole).toDouble(),
                     stage.memory.activations_bytes);
    EXPECT_EQ(model.index(r, MemoryModel::TotalColumn).data().toString(), format_gib(stage.memory.total_bytes()));
    EXPECT_EQ(model.index(r, MemoryModel::TotalColumn).data(Qt::ToolTipRole).toString(),
              format_bytes_exact(stage.memory.total_bytes()));
  }
  EXPECT_EQ(model.headerData(MemoryModel::FirstPartColumn, Qt::Horizontal).toString(), QStringLiteral("weights"));
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
  model.setMemory(e.memory);
  EXPECT_EQ(warnings.count(), 0);
}

TEST(BreakdownModel, PassesTheModelTesterAndAddsUpToTheIteration) {
  ModelTesterWarnings warnings;
  BreakdownModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  const est::Estimate e = default_estimate();
  ASSERT_TRUE(e.time.predicted);
  model.setTime(e.time);
  ASSERT_EQ(model.rowCount(), static_cast<int>(kTimePartCount));
  double seconds = 0, share = 0;
  for (int r = 0; r < model.rowCount(); ++r) {
    seconds += model.index(r, BreakdownModel::TimeColumn).data(BreakdownModel::ValueRole).toDouble();
    share += model.index(r, BreakdownModel::ShareColumn).data(BreakdownModel::ValueRole).toDouble();
  }
  EXPECT_NEAR(seconds, e.time.breakdown.total_s(), 1e-9);
  EXPECT_NEAR(share, 1.0, 1e-12);
  // Communication rows say what one GPU sends per iteration in that group; the others nothing.
  const auto sent = [&](TimePart part) {
    return model.index(static_cast<int>(part), BreakdownModel::SentColumn).data(BreakdownModel::ValueRole);
  };
  EXPECT_DOUBLE_EQ(sent(TimePart::tp_comm).toDouble(), e.time.breakdown.tp_bytes);
  EXPECT_DOUBLE_EQ(sent(TimePart::dp_comm).toDouble(), e.time.breakdown.dp_bytes);
  EXPECT_DOUBLE_EQ(sent(TimePart::pp_comm).toDouble(), e.time.breakdown.pp_bytes);
  EXPECT_GT(e.time.breakdown.tp_bytes, e.time.breakdown.dp_bytes) << "GPT-3 175B, TP 8: TP traffic dominates";
  EXPECT_FALSE(sent(TimePart::compute).isValid());
  // Each part says what it counts; the communication rows, that they are the timeline rule's.
  for (int r = 0; r < model.rowCount(); ++r) {
    EXPECT_FALSE(model.index(r, BreakdownModel::PartColumn).data(Qt::ToolTipRole).toString().isEmpty()) << r;
  }
  for (const TimePart part : {TimePart::tp_comm, TimePart::pp_comm}) {
    EXPECT_TRUE(model.index(static_cast<int>(part), BreakdownModel::PartColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("measures probe and imported")));
  }
  EXPECT_EQ(model.headerData(BreakdownModel::SentColumn, Qt::Horizontal).toString(), QStringLiteral("Sent per GPU"));
  // A given throughput has no breakdown: no rows.
  est::TimeEstimate given = e.time;
  given.predicted = false;
  model.setTime(given);
  EXPECT_EQ(model.rowCount(), 0);
  model.clear();
  EXPECT_EQ(warnings.count(), 0);
}

TEST(BreakdownModel, AnMoePlanShowsItsExpertAllToAll) {
  ModelTesterWarnings warnings;
  BreakdownModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  est::Plan plan = est::default_plan();
  plan.model = *est::find_model("mixtral-8x7b");
  plan.cluster = est::find_system("dgx-h100")->cluster;
  plan.cluster.gpus = 64;
  plan.layout = est::LayoutSpec{};
  plan.layout.pp = 4;
  plan.layout.ep = 8;
  plan.training.global_batch = 256;
  plan.training.achieved_tflops = 0;
  auto e = est::estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  model.setTime(e->time);
  const int row = static_cast<int>(TimePart::ep_comm);
  EXPECT_EQ(model.index(row, BreakdownModel::PartColumn).data().toString(), QStringLiteral("expert all-to-all"));
  EXPECT_DOUBLE_EQ(model.index(row, BreakdownModel::TimeColumn).data(BreakdownModel::ValueRole).toDouble(),
                   e->time.breakdown.ep_comm_s);
  EXPECT_GT(e->time.breakdown.ep_comm_s, 0);
  double seconds = 0;
  for (int r = 0; r < model.rowCount(); ++r) {
    seconds += model.index(r, BreakdownModel::TimeColumn).data(BreakdownModel::ValueRole).toDouble();
  }
  EXPECT_NEAR(seconds, e->time.breakdown.total_s(), 1e-9);
  EXPECT_EQ(warnings.count(), 0);
}

TEST(DiagnosticModel, PassesTheModelTesterAndKeepsTheField) {
  ModelTesterWarnings warnings;
  DiagnosticModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  est::Plan plan = est::default_plan();
  plan.layout.tp = 5;  // 96 heads are not divisible by 5
  auto e = est::estimate(plan);
  ASSERT_FALSE(e.ok());
  model.setDiagnostics(e.errors());
  ASSERT_GT(model.rowCount(), 0);
  bool tp = false;
  for (int r = 0; r < model.rowCount(); ++r) {
    tp |= model.index(r, 0).data(DiagnosticModel::FieldRole).toString() == QStringLiteral("layout.tp");
    EXPECT_EQ(model.index(r, DiagnosticModel::SeverityColumn).data().toString(), QStringLiteral("error"));
  }
  EXPECT_TRUE(tp);
  model.setDiagnostics({});
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(warnings.count(), 0);
}

}  // namespace
}  // namespace plansight::gui
