// A sweep as line charts: one panel per metric, stacked on a shared x axis (the swept field),
// points joined where the plan was valid, an x mark on the axis where it was not. The x axis is
// logarithmic (base 2) when the values are positive and span a factor of 16 or more, as
// micro-batch, GPU and TP sweeps do. Layout is a pure function of the result and the area, so
// tests check point positions against values and export paints the same picture.
#pragma once

#include <QFont>
#include <QPalette>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <vector>

#include "plansight/estimator/sweep.h"

class QPainter;

namespace plansight::gui {

struct SweepPanelLayout {
  QRectF plot;
  double y_min = 0, y_max = 1;      // values at plot.bottom() and plot.top()
  std::vector<QPointF> points;      // valid points, in value order
  std::vector<double> values;       // their x values
  std::vector<double> error_x;      // x pixel of each invalid point
};

struct SweepChartLayout {
  bool log_x = false;
  double x_min = 0, x_max = 1;
  std::vector<SweepPanelLayout> panels;  // one per metric
};

// `zero_based`: the y axis starts at 0 (amounts: memory, time, cost); otherwise it spans the
// values with a margin (a training loss, whose changes are small beside its size).
SweepChartLayout layout_sweep_chart(const estimator::SweepResult& result, const QRectF& area, bool zero_based = true);
// `title` is drawn above the panels (the plan the sweep ran on, when exported).
void paint_sweep_chart(QPainter& painter, const estimator::SweepResult& result, const QRectF& area,
                       const QPalette& palette, const QFont& font, const QString& title = {}, bool zero_based = true);

class SweepChart : public QWidget {
  Q_OBJECT

 public:
  explicit SweepChart(QWidget* parent = nullptr);
  void setResult(const estimator::SweepResult& result);
  void setZeroBased(bool zero_based);
  const estimator::SweepResult& result() const { return result_; }
  SweepChartLayout currentLayout() const { return layout_sweep_chart(result_, rect(), zero_based_); }
  QString toolTipAt(const QPointF& pos) const;  // the nearest point's value and metric
  QSize sizeHint() const override { return {640, 420}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  estimator::SweepResult result_;
  bool zero_based_ = true;
};

}  // namespace plansight::gui
