// The Memory page: the stacked per-stage chart against the GPU's capacity, the headline figures
// of the most loaded GPU, and the per-stage table with exact numbers.
#pragma once

#include <QWidget>

#include "plansight/gui/chart_export.h"

class QLabel;
class QTableView;

namespace plansight::gui {

class FigureGrid;
class MemoryChart;
class MemoryModel;
class PlanDocument;

class MemoryPage : public QWidget, public ExportablePage {
  Q_OBJECT

 public:
  explicit MemoryPage(PlanDocument* document, QWidget* parent = nullptr);
  MemoryChart* chart() const { return chart_; }
  MemoryModel* model() const { return model_; }

  QString exportTitle() const override { return QStringLiteral("memory"); }
  QSize exportSize() const override;
  void renderExport(QPainter& painter, const QSize& size) const override;

 private:
  void refresh();

  PlanDocument* document_;
  MemoryChart* chart_;
  MemoryModel* model_;
  QTableView* table_;
  FigureGrid* figures_;
  QLabel* total_;
  QLabel* capacity_;
  QLabel* headroom_;
  QLabel* params_;
  QLabel* status_;
};

}  // namespace plansight::gui
