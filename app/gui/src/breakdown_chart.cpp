// Iteration-time stacked bar with legend (see breakdown_chart.h).
#include "plansight/gui/breakdown_chart.h"
#include "plansight/gui/tool_tip.h"

#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "plansight/gui/format.h"

namespace plansight::gui {

BreakdownChartLayout layout_breakdown_chart(const estimator::TimeBreakdown& breakdown, const QRectF& area) {
  BreakdownChartLayout out;
  out.bar = QRectF(area.left() + 12, area.top() + 12, std::max(area.width() - 24, 10.0), 40);
  const double total = breakdown.total_s();
  double x = out.bar.left();
  for (std::size_t p = 0; p < kTimePartCount; ++p) {
    const auto part = static_cast<TimePart>(p);
    const double s = time_part_seconds(breakdown, part);
    const double w = total > 0 ? s / total * out.bar.width() : 0;
    out.segments.push_back({QRectF(x, out.bar.top(), w, out.bar.height()), part, s});
    x += w;
  }
  return out;
}

void paint_breakdown_chart(QPainter& painter, const estimator::TimeBreakdown& breakdown, const QRectF& area,
                           const QPalette& palette, const QFont& font) {
  const BreakdownChartLayout layout = layout_breakdown_chart(breakdown, area);
  const double total = breakdown.total_s();
  painter.save();
  painter.setFont(font);
  painter.fillRect(area, palette.color(QPalette::Base));
  painter.setRenderHint(QPainter::Antialiasing, false);
  const QFontMetricsF fm(font);
  for (const auto& s : layout.segments) {
    if (s.rect.width() <= 0) continue;
    const QColor fill = time_part_colour(s.part);
    painter.fillRect(s.rect, fill);
    const QString share = format_percent(total > 0 ? s.seconds / total : 0);
    if (fm.horizontalAdvance(share) + 6 <= s.rect.width()) {
      painter.setPen(text_on(fill));
      painter.drawText(s.rect, Qt::AlignCenter, share);
    }
  }
  // Legend: two columns of "part  time  share".
  const QColor text = palette.color(QPalette::Text);
  const double row_h = fm.height() + 6;
  const double col_w = std::max(260.0, layout.bar.width() / 2);
  for (std::size_t p = 0; p < layout.segments.size(); ++p) {
    const auto& s = layout.segments[p];
    const double x = layout.bar.left() + static_cast<double>(p % 2) * col_w;
    const double y = layout.bar.bottom() + 14 + static_cast<double>(p / 2) * row_h;
    painter.fillRect(QRectF(x, y + 2, 12, 12), time_part_colour(s.part));
    painter.setPen(text);
    painter.drawText(QPointF(x + 18, y + fm.ascent()), time_part_name(s.part));
    const QString value = format_seconds(s.seconds) + QStringLiteral("  (") +
                          format_percent(total > 0 ? s.seconds / total : 0) + QLatin1Char(')');
    painter.drawText(QRectF(x + 130, y, col_w - 150, row_h), Qt::AlignLeft | Qt::AlignTop, value);
  }
  painter.restore();
}

BreakdownChart::BreakdownChart(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumHeight(150);
}

void BreakdownChart::setBreakdown(const estimator::TimeBreakdown& breakdown, bool available) {
  breakdown_ = breakdown;
  available_ = available;
  update();
}

void BreakdownChart::paintChart(QPainter& painter, const QRectF& area) const {
  if (!available_) {
    painter.fillRect(area, palette().color(QPalette::Base));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(area, Qt::AlignCenter,
                     tr("No breakdown: the time comes from a given throughput, or the plan has errors."));
    return;
  }
  paint_breakdown_chart(painter, breakdown_, area, palette(), font());
}

void BreakdownChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  paintChart(painter, rect());
}

QString BreakdownChart::toolTipAt(const QPointF& pos) const {
  if (!available_) return {};
  const auto layout = layout_breakdown_chart(breakdown_, rect());
  for (const auto& s : layout.segments) {
    if (s.rect.contains(pos)) {
      return QStringLiteral("%1: %2 s of %3 s per iteration")
          .arg(time_part_name(s.part), format_fixed(s.seconds, 6), format_fixed(breakdown_.total_s(), 6));
    }
  }
  return {};
}

bool BreakdownChart::event(QEvent* event) {
  if (show_tool_tip(this, event, [this](const QPoint& at) { return toolTipAt(at); })) return true;
  return QWidget::event(event);
}

}  // namespace plansight::gui
