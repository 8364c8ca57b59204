// The Operators page, a teaching view of one GPU: the operators of one transformer layer (and of
// the LM head) of the current plan, forward, recomputation and backward, as the time model costs
// them on the plan's GPU (estimator/operator_report.h), as a roofline chart and a table of GEMM
// shapes, FLOPs, bytes, intensity, time, bound and share. Hovering a point selects its row;
// selecting a row rings its point. Follows the plan being edited.
#pragma once

#include <QWidget>

#include "plansight/gui/chart_export.h"

class QComboBox;
class QLabel;
class QTableView;

namespace plansight::gui {

class OperatorTableModel;
class PlanDocument;
class RooflineChart;

class OperatorsPage : public QWidget, public ExportablePage {
  Q_OBJECT

 public:
  explicit OperatorsPage(PlanDocument* document, QWidget* parent = nullptr);
  OperatorTableModel* model() const { return model_; }
  RooflineChart* chart() const { return chart_; }
  QTableView* table() const { return table_; }
  QComboBox* layerPicker() const { return layer_; }  // dense or MoE layer, for MoE models
  QString summary() const;

  QString exportTitle() const override { return QStringLiteral("operators"); }
  QSize exportSize() const override;
  void renderExport(QPainter& painter, const QSize& size) const override;

 private:
  void refresh();
  void showHovered(int row);

  PlanDocument* document_;
  QLabel* summary_;
  QComboBox* layer_;
  RooflineChart* chart_;
  OperatorTableModel* model_;
  QTableView* table_;
};

}  // namespace plansight::gui
