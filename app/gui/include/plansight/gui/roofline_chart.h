// A roofline (Williams, Waterman and Patterson 2009) of a plan's operators on its GPU: arithmetic
// intensity (FLOP/byte) on a log x axis, FLOP/s on a log y axis, the GPU's compute roof (its peak
// in the plan's precision) and memory slope (HBM bandwidth x intensity) meeting at the ridge
// point, and one point per operator at its predicted FLOP/s. Hovering a point names its row.
// Layout is a pure function of the rows and the area, so tests check positions against values
// and export paints the same picture. Painting keeps to opaque, non-antialiased lines and small
// marks (Qt's raster engine hands long antialiased or translucent lines to its thread pool).
#pragma once

#include <QFont>
#include <QPalette>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <vector>

#include "plansight/estimator/operator_report.h"

class QPainter;

namespace plansight::gui {

struct RooflinePoint {
  QPointF position;
  std::size_t row = 0;  // index into the rows laid out
};

struct RooflineLayout {
  QRectF plot;
  // log10 of FLOP/byte at the plot's left and right edges and of FLOP/s at its bottom and top.
  double log_x_min = -1, log_x_max = 4, log_y_min = 11, log_y_max = 16;
  // Operators with FLOPs, time and bytes; recompute rows sit on their forward rows and are left out.
  std::vector<RooflinePoint> points;
  QPointF memory_start, ridge, compute_end;  // the roofs: slope from memory_start to ridge, flat to compute_end
  bool valid() const { return plot.width() > 0 && log_x_max > log_x_min && log_y_max > log_y_min; }
  QPointF to_pixel(double intensity_flops_per_byte, double flops_per_s) const;
};

RooflineLayout layout_roofline(const estimator::Roofline& roof, const std::vector<estimator::OperatorRow>& rows,
                               const QRectF& area);
// `highlighted`: a row index to ring (-1: none); `title` above the chart (export).
void paint_roofline(QPainter& painter, const estimator::Roofline& roof, const std::vector<estimator::OperatorRow>& rows,
                    const QRectF& area, const QPalette& palette, const QFont& font, int highlighted = -1,
                    const QString& title = {});

class RooflineChart : public QWidget {
  Q_OBJECT

 public:
  explicit RooflineChart(QWidget* parent = nullptr);
  void setReport(const estimator::Roofline& roof, std::vector<estimator::OperatorRow> rows);
  void clear();
  RooflineLayout currentLayout() const { return layout_roofline(roof_, rows_, rect()); }
  // The row of the point nearest `pos` within 8 px, or -1.
  int rowAt(const QPointF& pos) const;
  void setHighlighted(int row);
  int highlighted() const { return highlighted_; }
  QString toolTipAt(const QPointF& pos) const;
  void paintChart(QPainter& painter, const QRectF& area, const QString& title = {}) const;
  QSize sizeHint() const override { return {640, 420}; }

 signals:
  void hoveredChanged(int row);  // -1 when the pointer leaves every point

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  bool event(QEvent* event) override;

 private:
  estimator::Roofline roof_;
  std::vector<estimator::OperatorRow> rows_;
  int highlighted_ = -1;
};

// Colour of an operator class's points (GEMM, attention, element-wise).
QColor operator_class_colour(estimator::OperatorClass c);

}  // namespace plansight::gui
