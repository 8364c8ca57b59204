// The Time & cost page: the iteration breakdown bar, the headline figures (iteration time, MFU,
// tokens/s, days, GPU-hours, cost) and the advisor's warnings; double-clicking a warning asks
// the window to show the field it names.
#pragma once

#include <QWidget>

#include "plansight/gui/chart_export.h"

class QLabel;
class QTableView;

namespace plansight::gui {

class BreakdownChart;
class BreakdownModel;
class DiagnosticModel;
class FigureGrid;
class PlanDocument;

class TimeCostPage : public QWidget, public ExportablePage {
  Q_OBJECT

 public:
  explicit TimeCostPage(PlanDocument* document, QWidget* parent = nullptr);
  BreakdownChart* chart() const { return chart_; }
  BreakdownModel* breakdownModel() const { return breakdown_; }
  DiagnosticModel* warningsModel() const { return warnings_; }

  QString exportTitle() const override { return QStringLiteral("time-and-cost"); }
  QSize exportSize() const override;
  void renderExport(QPainter& painter, const QSize& size) const override;

 signals:
  void fieldActivated(const QString& field);

 private:
  void refresh();

  PlanDocument* document_;
  BreakdownChart* chart_;
  BreakdownModel* breakdown_;
  DiagnosticModel* warnings_;
  FigureGrid* figures_;
  QLabel* source_;
  QLabel* iteration_;
  QLabel* tokens_per_s_;
  QLabel* mfu_;
  QLabel* hfu_;
  QLabel* tflops_;
  QLabel* days_;
  QLabel* gpu_hours_;
  QLabel* cost_;
  QLabel* bubble_;
  QLabel* micro_batches_;
  QLabel* dp_;
  QLabel* flops_;
};

}  // namespace plansight::gui
