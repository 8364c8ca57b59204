// Memory per GPU as stacked bars, one per pipeline stage (weights, gradients, optimizer states,
// activations, buffers, reserve), against the GPU's capacity line; exact bytes in tooltips.
// Layout is a pure function of the numbers and the area, so tests check bar heights against
// bytes and export paints the same thing into PNG or SVG.
#pragma once

#include <QFont>
#include <QPalette>
#include <QRectF>
#include <QWidget>
#include <vector>

#include "plansight/estimator/estimate.h"
#include "plansight/gui/theme.h"

class QPainter;

namespace plansight::gui {

struct MemoryChartLayout {
  struct Segment {
    QRectF rect;
    std::size_t stage = 0;  // index into MemoryEstimate::stages
    MemoryPart part = MemoryPart::weights;
    double bytes = 0;
  };
  QRectF plot;            // the bars' area; y = plot.bottom() is 0 bytes
  double axis_bytes = 1;  // bytes at plot.top()
  double px_per_byte = 0;
  double capacity_y = 0;
  double tick_step_bytes = 1;
  std::vector<QRectF> bars;  // whole bar per stage
  std::vector<Segment> segments;
};

MemoryChartLayout layout_memory_chart(const estimator::MemoryEstimate& memory, const QRectF& area);
void paint_memory_chart(QPainter& painter, const estimator::MemoryEstimate& memory, const QRectF& area,
                        const QPalette& palette, const QFont& font, const QString& gpu_name);

class MemoryChart : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryChart(QWidget* parent = nullptr);
  void setMemory(const estimator::MemoryEstimate& memory, const QString& gpu_name);
  const estimator::MemoryEstimate& memory() const { return memory_; }
  MemoryChartLayout currentLayout() const { return layout_memory_chart(memory_, rect()); }
  // Tooltip text at a point (empty outside the bars); public for tests.
  QString toolTipAt(const QPointF& pos) const;
  void paintChart(QPainter& painter, const QRectF& area) const;
  QSize sizeHint() const override { return {640, 360}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  estimator::MemoryEstimate memory_;
  QString gpu_name_;
};

}  // namespace plansight::gui
