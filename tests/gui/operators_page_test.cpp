// The Operators page: on the default plan its table holds the library's operator report row by
// row (QKV's forward GEMM at 2048 x 4608 x 12288, compute bound), the roofline puts each point
// at its intensity and FLOP/s with the roofs meeting at the ridge point, hovering a point selects
// its row, an edit of the plan (flash attention, TP 4) updates both, an invalid plan empties them;
// a MoE model offers its dense layer too. The table model passes QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QImage>
#include <QItemSelectionModel>
#include <QTableView>
#include <cmath>

#include "gui_test_support.h"
#include "plansight/estimator/operator_report.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/operator_table_model.h"
#include "plansight/gui/operators_page.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/roofline_chart.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

int find_row(const OperatorTableModel& model, const QString& name, const QString& pass) {
  for (int r = 0; r < model.rowCount(); ++r) {
    if (model.index(r, OperatorTableModel::OperatorColumn).data().toString() == name &&
        model.index(r, OperatorTableModel::PassColumn).data().toString() == pass) {
      return r;
    }
  }
  return -1;
}

TEST(OperatorTableModel, PassesTheModelTester) {
  test::ModelTesterWarnings warnings;
  OperatorTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  auto report = est::operator_report(est::default_plan());
  ASSERT_TRUE(report);
  model.setRows(report->rows);
  EXPECT_EQ(model.rowCount(), static_cast<int>(report->rows.size()));
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(warnings.count(), 0);
}

TEST(RooflineLayout, PointsSitAtTheirIntensityAndFlops) {
  auto report = est::operator_report(est::default_plan());
  ASSERT_TRUE(report);
  const QRectF area(0, 0, 900, 500);
  const RooflineLayout layout = layout_roofline(report->roofline, report->rows, area);
  ASSERT_TRUE(layout.valid());
  ASSERT_FALSE(layout.points.empty());
  for (const auto& pt : layout.points) {
    const auto& row = report->rows[pt.row];
    EXPECT_NE(row.op.pass, est::OperatorPass::recompute) << "recompute rows sit on their forward rows";
    const double x = std::log10(row.intensity_flops_per_byte), y = std::log10(row.achieved_flops_per_s);
    const double x_fraction = (x - layout.log_x_min) / (layout.log_x_max - layout.log_x_min);
    const double y_fraction = (y - layout.log_y_min) / (layout.log_y_max - layout.log_y_min);
    EXPECT_NEAR(pt.position.x(), layout.plot.left() + x_fraction * layout.plot.width(), 1e-6);
    EXPECT_NEAR(pt.position.y(), layout.plot.bottom() - y_fraction * layout.plot.height(), 1e-6);
    EXPECT_TRUE(layout.plot.adjusted(-1, -1, 1, 1).contains(pt.position)) << row.op.name;
    // No operator above its roof: its point is below the roof line at its x.
    EXPECT_GE(pt.position.y(), layout.to_pixel(row.intensity_flops_per_byte, row.attainable_flops_per_s).y() - 1e-6) << row.op.name;
  }
  // The roofs meet at the ridge point: peak 312 TFLOP/s at 153 FLOP/byte.
  const QPointF ridge = layout.to_pixel(report->roofline.ridge_flops_per_byte(), 312e12);
  EXPECT_NEAR(layout.ridge.x(), ridge.x(), 1e-6);
  EXPECT_NEAR(layout.ridge.y(), ridge.y(), 1e-6);
  EXPECT_NEAR(layout.compute_end.y(), layout.ridge.y(), 1e-6) << "the compute roof is flat";
  EXPECT_LT(layout.memory_start.x(), layout.ridge.x());
  EXPECT_GT(layout.memory_start.y(), layout.ridge.y()) << "the memory slope rises towards the ridge";
}

TEST(OperatorsPage, ShowsTheDefaultPlanAndFollowsEdits) {
  PlanDocument document;
  OperatorsPage page(&document);
  page.resize(1200, 800);
  document.replacePlan(est::default_plan());
  ASSERT_TRUE(test::wait_idle(document));

  auto report = est::operator_report(est::default_plan());
  ASSERT_TRUE(report);
  OperatorTableModel* model = page.model();
  ASSERT_EQ(model->rowCount(), static_cast<int>(report->rows.size()));
  const int qkv = find_row(*model, QStringLiteral("QKV"), QStringLiteral("forward"));
  ASSERT_EQ(qkv, 1) << "after the first norm";
  EXPECT_EQ(model->index(qkv, OperatorTableModel::ShapeColumn).data().toString(), QStringLiteral("2048 × 4608 × 12288"));
  EXPECT_EQ(model->index(qkv, OperatorTableModel::FlopsColumn).data().toString(), QStringLiteral("231.93"));
  EXPECT_EQ(model->index(qkv, OperatorTableModel::BoundColumn).data().toString(), QStringLiteral("compute"));
  EXPECT_EQ(model->index(qkv, OperatorTableModel::TimeColumn).data(OperatorTableModel::ValueRole).toDouble(),
            report->rows[1].op.seconds);
  EXPECT_EQ(model->index(0, OperatorTableModel::BoundColumn).data().toString(), QStringLiteral("memory")) << "a norm";
  EXPECT_GE(find_row(*model, QStringLiteral("QKV"), QStringLiteral("recompute")), 0) << "full recomputation";
  EXPECT_GE(find_row(*model, QStringLiteral("logits"), QStringLiteral("backward dW")), 0);
  EXPECT_TRUE(page.summary().contains(QStringLiteral("ridge point 153.0 FLOP/byte"))) << page.summary().toStdString();
  EXPECT_TRUE(page.summary().contains(QStringLiteral("the time model's compute"))) << page.summary().toStdString();
  EXPECT_FALSE(page.layerPicker()->isVisibleTo(&page)) << "a dense model has one kind of layer";

  // Hovering QKV's point selects its row; the tooltip is the row.
  RooflineChart* chart = page.chart();
  (void)page.grab();  // lays the page out: the chart takes its size in the splitter
  const RooflineLayout layout = chart->currentLayout();
  QPointF qkv_at;
  for (const auto& pt : layout.points) {
    if (static_cast<int>(pt.row) == qkv) qkv_at = pt.position;
  }
  ASSERT_FALSE(qkv_at.isNull());
  const int hit = chart->rowAt(qkv_at);
  ASSERT_GE(hit, 0);
  EXPECT_EQ(report->rows[static_cast<std::size_t>(hit)].op.name, "QKV") << "forward and dX GEMMs share the point";
  EXPECT_TRUE(chart->toolTipAt(qkv_at).startsWith(QStringLiteral("QKV, "))) << chart->toolTipAt(qkv_at).toStdString();
  EXPECT_EQ(chart->rowAt(QPointF(2, 2)), -1);
  emit chart->hoveredChanged(hit);
  EXPECT_EQ(page.table()->selectionModel()->currentIndex().row(), hit);
  EXPECT_EQ(chart->highlighted(), hit) << "the selected row's point is ringed";
  const QImage image = chart->grab().toImage();
  ASSERT_FALSE(image.isNull());
  // The GEMM's mark is painted in the GEMM colour at its place.
  const QColor at = image.pixelColor(qkv_at.toPoint());
  EXPECT_LT(std::abs(at.blue() - operator_class_colour(est::OperatorClass::gemm).blue()), 60) << at.name().toStdString();

  // An edit: flash attention on TP 4 with sequence parallelism.
  est::Plan edited = est::default_plan();
  edited.training.attention = est::AttentionKernel::flash;
  edited.layout.tp = 4;
  edited.layout.pp = 16;
  edited.layout.sequence_parallel = true;
  document.editPlan(edited);
  ASSERT_TRUE(test::wait_idle(document));
  EXPECT_GE(find_row(*model, QStringLiteral("flash attention"), QStringLiteral("forward")), 0);
  EXPECT_EQ(find_row(*model, QStringLiteral("scores Q K^T"), QStringLiteral("forward")), -1);
  EXPECT_EQ(model->index(find_row(*model, QStringLiteral("QKV"), QStringLiteral("forward")), OperatorTableModel::ShapeColumn)
                .data()
                .toString(),
            QStringLiteral("2048 × 9216 × 12288"));
  EXPECT_TRUE(page.summary().contains(QStringLiteral("sequence parallelism on, flash attention"))) << page.summary().toStdString();

  est::Plan broken = edited;
  broken.layout.tp = 3;
  document.editPlan(broken);
  ASSERT_TRUE(test::wait_idle(document));
  EXPECT_EQ(model->rowCount(), 0);
  EXPECT_TRUE(page.summary().contains(QStringLiteral("errors")));
}

TEST(OperatorsPage, MoeModelsOfferTheirDenseLayer) {
  PlanDocument document;
  OperatorsPage page(&document);
  est::Plan p = est::default_plan();
  p.model = *est::find_model("mixtral-8x7b");
  p.cluster = est::find_system("dgx-h100")->cluster;
  p.cluster.gpus = 64;
  p.layout = est::LayoutSpec{};
  p.layout.tp = 2;
  p.layout.ep = 4;
  p.layout.sequence_parallel = true;
  p.training.global_batch = 256;
  p.training.micro_batch = 1;
  document.replacePlan(p);
  ASSERT_TRUE(test::wait_idle(document));
  ASSERT_GT(page.model()->rowCount(), 0) << page.summary().toStdString();
  EXPECT_TRUE(page.layerPicker()->isVisibleTo(&page));
  EXPECT_GE(find_row(*page.model(), QStringLiteral("experts FC1 (grouped)"), QStringLiteral("forward")), 0);
  page.layerPicker()->setCurrentIndex(page.layerPicker()->findData(static_cast<int>(est::LayerKind::dense)));
  EXPECT_EQ(find_row(*page.model(), QStringLiteral("experts FC1 (grouped)"), QStringLiteral("forward")), -1);
  EXPECT_GE(find_row(*page.model(), QStringLiteral("MLP gate + up"), QStringLiteral("forward")), 0);
}

}  // namespace
}  // namespace plansight::gui
