// Sweep charts (sweep_chart.h).
#include "plansight/gui/sweep_chart.h"
#include "plansight/gui/tool_tip.h"

#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "plansight/estimator/plan_metrics.h"
#include "plansight/gui/theme.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

constexpr double kLeft = 72, kRight = 16, kTop = 22, kBottom = 30, kGap = 26;

// A "nice" step (1, 2 or 5 x 10^k) giving about `ticks` intervals over `span`.
double nice_step(double span, int ticks) {
  if (span <= 0) return 1;
  const double raw = span / ticks, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= f * magnitude) return f * magnitude;
  }
  return 10 * magnitude;
}

QString number_text(double v) { return QString::number(v, 'g', 4); }

QColor series_colour(std::size_t i) {
  static const QColor colours[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
                                   QColor(0xe1, 0x57, 0x59), QColor(0x76, 0xb7, 0xb2), QColor(0xb0, 0x7a, 0xa1)};
  return colours[i % std::size(colours)];
}

QString metric_title(const std::string& metric) {
  const auto* info = est::find_plan_metric(metric);
  const QString unit = info ? QString::fromStdString(std::string(info->unit)) : QString();
  return unit.isEmpty() ? QString::fromStdString(metric) : QStringLiteral("%1 (%2)").arg(QString::fromStdString(metric), unit);
}

}  // namespace

SweepChartLayout layout_sweep_chart(const est::SweepResult& result, const QRectF& area, bool zero_based) {
  SweepChartLayout out;
  if (result.points.empty() || result.metrics.empty()) return out;
  double lo = result.points.front().value, hi = lo;
  for (const auto& p : result.points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  out.log_x = lo > 0 && hi / lo >= 16;
  out.x_min = out.log_x ? std::log2(lo) : lo;
  out.x_max = out.log_x ? std::log2(hi) : hi;
  if (out.x_max == out.x_min) {
    out.x_min -= 0.5;
    out.x_max += 0.5;
  }
  const std::size_t n = result.metrics.size();
  const double panel_h = std::max(40.0, (area.height() - kGap * static_cast<double>(n - 1)) / static_cast<double>(n));
  for (std::size_t m = 0; m < n; ++m) {
    SweepPanelLayout panel;
    const double top = area.top() + static_cast<double>(m) * (panel_h + kGap);
    panel.plot = QRectF(area.left() + kLeft, top + kTop, std::max(10.0, area.width() - kLeft - kRight),
                        std::max(10.0, panel_h - kTop - kBottom));
    bool any = false;
    for (const auto& p : result.points) {
      if (!p.error.empty()) continue;
      const double v = p.metrics[m];
      const double low = zero_based ? std::min(0.0, v) : v, high = zero_based ? std::max(0.0, v) : v;
      panel.y_min = any ? std::min(panel.y_min, low) : low;
      panel.y_max = any ? std::max(panel.y_max, high) : high;
      any = true;
    }
    if (panel.y_max <= panel.y_min) {
      const double pad = std::max(std::abs(panel.y_max) * 0.05, 1e-12);
      panel.y_min -= zero_based ? 0 : pad;
      panel.y_max += pad;
    }
    const double span = panel.y_max - panel.y_min;
    panel.y_max += 0.08 * span;                // headroom for the top label
    if (!zero_based) panel.y_min -= 0.08 * span;
    auto x_of = [&](double value) {
      const double x = out.log_x ? std::log2(value) : value;
      return panel.plot.left() + (x - out.x_min) / (out.x_max - out.x_min) * panel.plot.width();
    };
    for (const auto& p : result.points) {
      if (!p.error.empty()) {
        panel.error_x.push_back(x_of(p.value));
        continue;
      }
      const double y = panel.plot.bottom() - (p.metrics[m] - panel.y_min) / (panel.y_max - panel.y_min) * panel.plot.height();
      panel.points.emplace_back(x_of(p.value), y);
      panel.values.push_back(p.value);
    }
    out.panels.push_back(std::move(panel));
  }
  return out;
}

void paint_sweep_chart(QPainter& painter, const est::SweepResult& result, const QRectF& area, const QPalette& palette,
                       const QFont& font, const QString& title, bool zero_based) {
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing);
  painter.fillRect(area, palette.color(QPalette::Base));
  painter.setFont(font);
  QRectF body = area;
  if (!title.isEmpty()) {
    QFont bold = font;
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(palette.color(QPalette::Text));
    painter.drawText(area.adjusted(8, 4, -8, 0), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, title);
    painter.setFont(font);
    body.setTop(area.top() + 2.2 * painter.fontMetrics().height());
  }
  if (result.points.empty()) {
    painter.setPen(palette.color(QPalette::PlaceholderText));
    painter.drawText(body, Qt::AlignCenter, QObject::tr("Run a sweep to see its chart"));
    painter.restore();
    return;
  }
  const SweepChartLayout layout = layout_sweep_chart(result, body, zero_based);
  const QColor grid = palette.color(QPalette::Mid), text = palette.color(QPalette::Text);
  for (std::size_t m = 0; m < layout.panels.size(); ++m) {
    const SweepPanelLayout& panel = layout.panels[m];
    // y grid and labels
    const double step = nice_step(panel.y_max - panel.y_min, 4);
    for (double y = std::ceil(panel.y_min / step) * step; y <= panel.y_max + 1e-12; y += step) {
      const double py = panel.plot.bottom() - (y - panel.y_min) / (panel.y_max - panel.y_min) * panel.plot.height();
      painter.setPen(QPen(grid, 0.5, Qt::DotLine));
      painter.drawLine(QPointF(panel.plot.left(), py), QPointF(panel.plot.right(), py));
      painter.setPen(text);
      painter.drawText(QRectF(body.left(), py - 8, kLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter, number_text(y));
    }
    // x ticks: at every swept value (a sweep has few) or, for long ones, evenly
    painter.setPen(grid);
    painter.drawLine(panel.plot.bottomLeft(), panel.plot.bottomRight());
    painter.drawLine(panel.plot.bottomLeft(), panel.plot.topLeft());
    const std::size_t every = std::max<std::size_t>(1, result.points.size() / 12);
    for (std::size_t i = 0; i < result.points.size(); i += every) {
      const double v = result.points[i].value;
      const double x = (layout.log_x ? std::log2(v) : v);
      const double px = panel.plot.left() + (x - layout.x_min) / (layout.x_max - layout.x_min) * panel.plot.width();
      painter.setPen(text);
      painter.drawText(QRectF(px - 30, panel.plot.bottom() + 2, 60, 16), Qt::AlignHCenter | Qt::AlignTop, number_text(v));
    }
    painter.setPen(text);
    painter.drawText(QRectF(panel.plot.left(), panel.plot.top() - kTop, panel.plot.width(), kTop - 4),
                     Qt::AlignLeft | Qt::AlignBottom,
                     metric_title(result.metrics[m]) + QObject::tr(" vs %1").arg(QString::fromStdString(result.field.name)));
    // the line and its points
    const QColor colour = series_colour(m);
    if (panel.points.size() > 1) {
      QPainterPath path(panel.points.front());
      for (std::size_t i = 1; i < panel.points.size(); ++i) path.lineTo(panel.points[i]);
      painter.setPen(QPen(colour, 2));
      painter.setBrush(Qt::NoBrush);
      painter.drawPath(path);
    }
    painter.setPen(QPen(colour, 1));
    painter.setBrush(colour);
    for (const QPointF& p : panel.points) painter.drawEllipse(p, 3, 3);
    // invalid values: an x on the axis
    painter.setPen(QPen(alert_colour(palette), 1.5));
    for (double x : panel.error_x) {
      const double y = panel.plot.bottom();
      painter.drawLine(QPointF(x - 4, y - 4), QPointF(x + 4, y + 4));
      painter.drawLine(QPointF(x - 4, y + 4), QPointF(x + 4, y - 4));
    }
  }
  painter.restore();
}

SweepChart::SweepChart(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("sweepChart"));
  setMinimumHeight(220);
}

void SweepChart::setZeroBased(bool zero_based) {
  zero_based_ = zero_based;
  update();
}

void SweepChart::setResult(const est::SweepResult& result) {
  result_ = result;
  update();
}

QString SweepChart::toolTipAt(const QPointF& pos) const {
  const SweepChartLayout layout = currentLayout();
  const QString field = QString::fromStdString(result_.field.name);
  for (std::size_t m = 0; m < layout.panels.size(); ++m) {
    const SweepPanelLayout& panel = layout.panels[m];
    if (!panel.plot.adjusted(-6, -6, 6, 6).contains(pos)) continue;
    // The nearest swept value within 8 px, valid or not.
    const est::SweepPoint* nearest = nullptr;
    double nearest_d = 8;
    for (const auto& p : result_.points) {
      const double x = layout.log_x ? std::log2(p.value) : p.value;
      const double px = panel.plot.left() + (x - layout.x_min) / (layout.x_max - layout.x_min) * panel.plot.width();
      if (std::abs(px - pos.x()) <= nearest_d) {
        nearest_d = std::abs(px - pos.x());
        nearest = &p;
      }
    }
    if (!nearest) return {};
    if (!nearest->error.empty()) {
      return QStringLiteral("%1 = %2: %3").arg(field, number_text(nearest->value), QString::fromStdString(nearest->error));
    }
    return QStringLiteral("%1 = %2: %3 %4")
        .arg(field, number_text(nearest->value), number_text(nearest->metrics[m]), metric_title(result_.metrics[m]));
  }
  return {};
}

void SweepChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  paint_sweep_chart(painter, result_, rect(), palette(), font(), {}, zero_based_);
}

bool SweepChart::event(QEvent* event) {
  if (show_tool_tip(this, event, [this](const QPoint& at) { return toolTipAt(at); })) return true;
  return QWidget::event(event);
}

}  // namespace plansight::gui
