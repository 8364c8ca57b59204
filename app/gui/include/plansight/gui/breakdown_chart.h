// One iteration as a horizontal stacked bar — compute, exposed TP/CP/PP/DP communication,
// pipeline bubble, optimizer — with a legend giving each part's time and share. Same pattern as
// the memory chart: a pure layout function, a painter, a thin widget with tooltips.
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

struct BreakdownChartLayout {
  struct Segment {
    QRectF rect;
    TimePart part = TimePart::compute;
    double seconds = 0;
  };
  QRectF bar;
  std::vector<Segment> segments;
};

BreakdownChartLayout layout_breakdown_chart(const estimator::TimeBreakdown& breakdown, const QRectF& area);
void paint_breakdown_chart(QPainter& painter, const estimator::TimeBreakdown& breakdown, const QRectF& area,
                           const QPalette& palette, const QFont& font);

class BreakdownChart : public QWidget {
  Q_OBJECT

 public:
  explicit BreakdownChart(QWidget* parent = nullptr);
  void setBreakdown(const estimator::TimeBreakdown& breakdown, bool available);
  QString toolTipAt(const QPointF& pos) const;
  void paintChart(QPainter& painter, const QRectF& area) const;
  QSize sizeHint() const override { return {640, 150}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  estimator::TimeBreakdown breakdown_;
  bool available_ = false;
};

}  // namespace plansight::gui
