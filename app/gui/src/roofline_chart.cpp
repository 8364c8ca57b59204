// The roofline chart (roofline_chart.h).
#include "plansight/gui/roofline_chart.h"
#include "plansight/gui/tool_tip.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "plansight/gui/operator_table_model.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

constexpr double kLeft = 58, kRight = 30, kTop = 26, kBottom = 40;  // kRight: half the last x label
constexpr double kHoverPx = 8;

bool drawn(const est::OperatorRow& row) {
  return row.op.pass != est::OperatorPass::recompute && row.op.flops > 0 && row.op.seconds > 0 && row.op.bytes > 0;
}

// `fraction` of the way from the base colour to the text colour, opaque: grid lines that read on
// light and dark palettes without translucency.
QColor mix(const QPalette& palette, double fraction) {
  const QColor base = palette.color(QPalette::Base), text = palette.color(QPalette::Text);
  return QColor::fromRgbF(static_cast<float>(base.redF() + (text.redF() - base.redF()) * fraction),
                          static_cast<float>(base.greenF() + (text.greenF() - base.greenF()) * fraction),
                          static_cast<float>(base.blueF() + (text.blueF() - base.blueF()) * fraction));
}

QString decade_text(int exponent, double scale) {
  return QString::number(std::pow(10.0, exponent) / scale, 'g', 6);
}

// One mark per pass: forward filled, input gradient hollow, weight gradient a hollow square.
void paint_mark(QPainter& p, const QPointF& at, const QColor& colour, est::OperatorPass pass) {
  constexpr double r = 4;
  switch (pass) {
    case est::OperatorPass::forward:
    case est::OperatorPass::recompute:
      p.setPen(QPen(colour.darker(130), 1));
      p.setBrush(colour);
      p.drawEllipse(at, r, r);
      break;
    case est::OperatorPass::backward_input:
      p.setPen(QPen(colour, 1.8));
      p.setBrush(Qt::NoBrush);
      p.drawEllipse(at, r, r);
      break;
    case est::OperatorPass::backward_weight:
      p.setPen(QPen(colour, 1.8));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(at.x() - r, at.y() - r, 2 * r, 2 * r));
      break;
  }
}

}  // namespace

QColor operator_class_colour(est::OperatorClass c) {
  switch (c) {
    case est::OperatorClass::gemm: return QColor(0x4e, 0x79, 0xa7);
    case est::OperatorClass::attention: return QColor(0xf2, 0x8e, 0x2b);
    case est::OperatorClass::elementwise: return QColor(0x59, 0xa1, 0x4f);
  }
  return Qt::gray;
}

QPointF RooflineLayout::to_pixel(double intensity, double flops_per_s) const {
  const double x = std::log10(std::max(intensity, 1e-300)), y = std::log10(std::max(flops_per_s, 1e-300));
  return {plot.left() + (x - log_x_min) / (log_x_max - log_x_min) * plot.width(),
          plot.bottom() - (y - log_y_min) / (log_y_max - log_y_min) * plot.height()};
}

RooflineLayout layout_roofline(const est::Roofline& roof, const std::vector<est::OperatorRow>& rows, const QRectF& area) {
  RooflineLayout out;
  out.plot = QRectF(area.left() + kLeft, area.top() + kTop, std::max(10.0, area.width() - kLeft - kRight),
                    std::max(10.0, area.height() - kTop - kBottom));
  const double ridge = roof.ridge_flops_per_byte();
  double x_lo = ridge > 0 ? ridge : 1, x_hi = x_lo, y_lo = roof.peak_flops_per_s > 0 ? roof.peak_flops_per_s : 1e12,
         y_hi = y_lo;
  for (const auto& row : rows) {
    if (!drawn(row)) continue;
    x_lo = std::min(x_lo, row.intensity_flops_per_byte);
    x_hi = std::max(x_hi, row.intensity_flops_per_byte);
    y_lo = std::min(y_lo, row.achieved_flops_per_s);
    y_hi = std::max(y_hi, row.achieved_flops_per_s);
  }
  out.log_x_min = std::floor(std::log10(x_lo));
  out.log_x_max = std::max(std::ceil(std::log10(x_hi * 1.5)), out.log_x_min + 2);
  // The memory slope enters at the left edge: below the lowest point when the GPU's bandwidth
  // there is lower still.
  if (roof.memory_bytes_per_s > 0) y_lo = std::min(y_lo, roof.memory_bytes_per_s * std::pow(10.0, out.log_x_min));
  out.log_y_min = std::floor(std::log10(y_lo));
  out.log_y_max = std::log10(y_hi) + 0.3;  // room above the compute roof for its label
  if (out.log_y_max - out.log_y_min < 2) out.log_y_min = out.log_y_max - 2;

  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (drawn(rows[i])) out.points.push_back({out.to_pixel(rows[i].intensity_flops_per_byte, rows[i].achieved_flops_per_s), i});
  }
  if (roof.peak_flops_per_s > 0 && roof.memory_bytes_per_s > 0) {
    double start = std::pow(10.0, out.log_x_min);
    const double bottom = std::pow(10.0, out.log_y_min);
    if (roof.memory_bytes_per_s * start < bottom) start = bottom / roof.memory_bytes_per_s;
    out.memory_start = out.to_pixel(start, roof.memory_bytes_per_s * start);
    out.ridge = out.to_pixel(ridge, roof.peak_flops_per_s);
    out.compute_end = out.to_pixel(std::pow(10.0, out.log_x_max), roof.peak_flops_per_s);
  }
  return out;
}

void paint_roofline(QPainter& painter, const est::Roofline& roof, const std::vector<est::OperatorRow>& rows,
                    const QRectF& area, const QPalette& palette, const QFont& font, int highlighted, const QString& title) {
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, false);
  painter.fillRect(area, palette.color(QPalette::Base));
  painter.setFont(font);
  const QColor text = palette.color(QPalette::Text);
  QRectF body = area;
  if (!title.isEmpty()) {
    QFont bold = font;
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(text);
    painter.drawText(area.adjusted(8, 4, -8, 0), Qt::AlignLeft | Qt::AlignTop, title);
    painter.setFont(font);
    body.setTop(area.top() + 1.6 * painter.fontMetrics().height());
  }
  const RooflineLayout layout = layout_roofline(roof, rows, body);
  const QRectF& plot = layout.plot;

  // Decade grid and labels: opaque and without antialiasing.
  const QColor grid = mix(palette, 0.16);
  const QFontMetricsF metrics(font);
  for (int e = static_cast<int>(std::ceil(layout.log_x_min)); e <= static_cast<int>(std::floor(layout.log_x_max)); ++e) {
    const double x = layout.to_pixel(std::pow(10.0, e), 1).x();
    painter.setPen(grid);
    painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    painter.setPen(text);
    painter.drawText(QRectF(x - 40, plot.bottom() + 3, 80, metrics.height()), Qt::AlignHCenter | Qt::AlignTop, decade_text(e, 1));
  }
  for (int e = static_cast<int>(std::ceil(layout.log_y_min)); e <= static_cast<int>(std::floor(layout.log_y_max)); ++e) {
    const double y = layout.to_pixel(1, std::pow(10.0, e)).y();
    painter.setPen(grid);
    painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    painter.setPen(text);
    painter.drawText(QRectF(body.left(), y - metrics.height() / 2, kLeft - 6, metrics.height()), Qt::AlignRight | Qt::AlignVCenter,
                     decade_text(e, 1e12));
  }
  painter.setPen(mix(palette, 0.5));
  painter.drawRect(plot);
  painter.setPen(text);
  painter.drawText(QRectF(plot.left(), plot.bottom() + metrics.height() + 4, plot.width(), metrics.height()), Qt::AlignHCenter,
                   QObject::tr("arithmetic intensity (FLOP/byte)"));
  painter.drawText(QRectF(body.left() + 4, plot.top() - kTop + 2, plot.width(), kTop - 4), Qt::AlignLeft | Qt::AlignBottom,
                   QObject::tr("TFLOP/s"));

  // The roofs: memory slope up to the ridge point, flat compute roof after it.
  if (roof.peak_flops_per_s > 0 && roof.memory_bytes_per_s > 0) {
    painter.setPen(QPen(text, 2));
    painter.drawLine(layout.memory_start, layout.ridge);
    painter.drawLine(layout.ridge, layout.compute_end);
    painter.setPen(QPen(mix(palette, 0.6), 1, Qt::DashLine));
    painter.drawLine(layout.ridge, QPointF(layout.ridge.x(), plot.bottom()));
    painter.setPen(text);
    painter.drawText(QRectF(layout.ridge.x() + 6, layout.ridge.y() - metrics.height() - 3, plot.right() - layout.ridge.x() - 8,
                            metrics.height()),
                     Qt::AlignRight | Qt::AlignBottom,
                     QObject::tr("peak %1 TFLOP/s").arg(roof.peak_flops_per_s / 1e12, 0, 'f', 1));
    painter.drawText(QRectF(layout.ridge.x() + 4, plot.bottom() - metrics.height() - 2, 260, metrics.height()),
                     Qt::AlignLeft | Qt::AlignBottom,
                     QObject::tr("ridge point %1 FLOP/byte").arg(roof.ridge_flops_per_byte(), 0, 'f', 1));
    const QPointF mid = (layout.memory_start + layout.ridge) / 2;
    painter.drawText(QRectF(mid.x() - 200, mid.y() - metrics.height() - 6, 190, metrics.height()), Qt::AlignRight | Qt::AlignBottom,
                     QObject::tr("HBM %1 GB/s").arg(roof.memory_bytes_per_s / 1e9, 0, 'f', 0));
  }

  // Points: small antialiased marks, backward under forward.
  painter.setRenderHint(QPainter::Antialiasing, true);
  painter.setClipRect(plot.adjusted(-6, -6, 6, 6));
  for (int pass_forward = 0; pass_forward < 2; ++pass_forward) {
    for (const auto& pt : layout.points) {
      const auto& op = rows[pt.row].op;
      if ((op.pass == est::OperatorPass::forward) != (pass_forward == 1)) continue;
      paint_mark(painter, pt.position, operator_class_colour(op.op_class), op.pass);
    }
  }
  for (const auto& pt : layout.points) {
    if (static_cast<int>(pt.row) != highlighted) continue;
    painter.setPen(QPen(text, 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawEllipse(pt.position, 9, 9);
  }
  painter.setClipping(false);
  painter.setRenderHint(QPainter::Antialiasing, false);

  // Legend, bottom right inside the plot (high intensity at low FLOP/s stays empty).
  const QStringList lines = {QObject::tr("GEMM"), QObject::tr("attention"), QObject::tr("element-wise"),
                             QObject::tr("● forward  ○ backward  □ weight gradient")};
  double width = 0;
  for (const auto& l : lines) width = std::max(width, metrics.horizontalAdvance(l));
  const double line_h = metrics.height() + 2, lines_h = static_cast<double>(lines.size()) * line_h;
  const QRectF box(plot.right() - width - 34, plot.bottom() - lines_h - 30, width + 26, lines_h + 8);
  painter.fillRect(box, palette.color(QPalette::Base));
  painter.setPen(mix(palette, 0.4));
  painter.drawRect(box);
  for (int i = 0; i < lines.size(); ++i) {
    const double y = box.top() + 4 + i * line_h;
    if (i < 3) {
      painter.fillRect(QRectF(box.left() + 6, y + line_h / 2 - 4, 9, 9),
                       operator_class_colour(static_cast<est::OperatorClass>(i)));
    }
    painter.setPen(text);
    painter.drawText(QRectF(box.left() + (i < 3 ? 20 : 6), y, width + 6, line_h), Qt::AlignLeft | Qt::AlignVCenter, lines[i]);
  }
  painter.restore();
}

RooflineChart::RooflineChart(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("rooflineChart"));
  setMouseTracking(true);
  setMinimumHeight(240);
}

void RooflineChart::setReport(const est::Roofline& roof, std::vector<est::OperatorRow> rows) {
  roof_ = roof;
  rows_ = std::move(rows);
  highlighted_ = -1;
  update();
}

void RooflineChart::clear() { setReport({}, {}); }

int RooflineChart::rowAt(const QPointF& pos) const {
  const RooflineLayout layout = currentLayout();
  int best = -1;
  double best_d = kHoverPx;
  for (const auto& pt : layout.points) {
    const double d = std::hypot(pt.position.x() - pos.x(), pt.position.y() - pos.y());
    if (d < best_d) {
      best_d = d;
      best = static_cast<int>(pt.row);
    }
  }
  return best;
}

void RooflineChart::setHighlighted(int row) {
  if (row == highlighted_) return;
  highlighted_ = row;
  update();
}

QString RooflineChart::toolTipAt(const QPointF& pos) const {
  const int row = rowAt(pos);
  return row < 0 ? QString() : operator_row_text(rows_[static_cast<std::size_t>(row)]);
}

void RooflineChart::paintChart(QPainter& painter, const QRectF& area, const QString& title) const {
  paint_roofline(painter, roof_, rows_, area, palette(), font(), highlighted_, title);
}

void RooflineChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  if (rows_.empty()) {
    painter.fillRect(rect(), palette().color(QPalette::Base));
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, tr("No operators: the plan has errors"));
    return;
  }
  paintChart(painter, rect());
}

void RooflineChart::mouseMoveEvent(QMouseEvent* event) {
  const int row = rowAt(event->position());
  if (row == highlighted_) return;
  setHighlighted(row);
  emit hoveredChanged(row);
}

void RooflineChart::leaveEvent(QEvent*) {
  if (highlighted_ < 0) return;
  setHighlighted(-1);
  emit hoveredChanged(-1);
}

bool RooflineChart::event(QEvent* event) {
  if (show_tool_tip(this, event, [this](const QPoint& at) { return toolTipAt(at); })) return true;
  return QWidget::event(event);
}

}  // namespace plansight::gui
