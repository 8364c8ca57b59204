// Stacked memory bars per stage with a capacity line (see memory_chart.h).
#include "plansight/gui/memory_chart.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kLeft = 64, kRight = 16, kTop = 30, kBottom = 26;

// 1-2-5 x 10^k GiB step giving at least `min_px` between grid lines.
double tick_step(double axis_bytes, double height_px, double min_px) {
  const double wanted = axis_bytes / std::max(height_px / min_px, 1.0) / kGiB;
  const double decade = std::pow(10.0, std::floor(std::log10(std::max(wanted, 1e-6))));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * decade >= wanted) return m * decade * kGiB;
  }
  return 10 * decade * kGiB;
}

}  // namespace

MemoryChartLayout layout_memory_chart(const estimator::MemoryEstimate& memory, const QRectF& area) {
  MemoryChartLayout out;
  out.plot = QRectF(area.left() + kLeft, area.top() + kTop, std::max(area.width() - kLeft - kRight, 10.0),
                    std::max(area.height() - kTop - kBottom, 10.0));
  double highest = memory.capacity_bytes;
  for (const auto& s : memory.stages) highest = std::max(highest, s.memory.total_bytes());
  out.axis_bytes = highest > 0 ? highest * 1.08 : 1;
  out.px_per_byte = out.plot.height() / out.axis_bytes;
  out.capacity_y = out.plot.bottom() - memory.capacity_bytes * out.px_per_byte;
  out.tick_step_bytes = tick_step(out.axis_bytes, out.plot.height(), 32);

  const std::size_t n = memory.stages.size();
  if (n == 0) return out;
  const double slot = out.plot.width() / static_cast<double>(n);
  const double bar_width = std::max(1.0, std::min(72.0, slot * 0.7));
  for (std::size_t i = 0; i < n; ++i) {
    const double x = out.plot.left() + slot * (static_cast<double>(i) + 0.5) - bar_width / 2;
    double y = out.plot.bottom();
    const auto& m = memory.stages[i].memory;
    for (std::size_t p = 0; p < kMemoryPartCount; ++p) {
      const auto part = static_cast<MemoryPart>(p);
      const double bytes = memory_part_bytes(m, part);
      const double h = bytes * out.px_per_byte;
      out.segments.push_back({QRectF(x, y - h, bar_width, h), i, part, bytes});
      y -= h;
    }
    out.bars.emplace_back(x, y, bar_width, out.plot.bottom() - y);
  }
  return out;
}

void paint_memory_chart(QPainter& painter, const estimator::MemoryEstimate& memory, const QRectF& area,
                        const QPalette& palette, const QFont& font, const QString& gpu_name) {
  const MemoryChartLayout layout = layout_memory_chart(memory, area);
  painter.save();
  painter.setFont(font);
  painter.fillRect(area, palette.color(QPalette::Base));
  const QColor text = palette.color(QPalette::Text);
  // The grid: text at 16 % over the base, mixed here into an opaque colour and drawn without
  // antialiasing. A translucent or antialiased line goes through Qt's span blending, which hands
  // each long line to its thread pool: most of a repaint's time (bench_timeline_paint, EditPart).
  const QColor base = palette.color(QPalette::Base);
  constexpr double kGridAlpha = 40.0 / 255.0;
  const QColor grid = QColor::fromRgbF(static_cast<float>(base.redF() + (text.redF() - base.redF()) * kGridAlpha),
                                       static_cast<float>(base.greenF() + (text.greenF() - base.greenF()) * kGridAlpha),
                                       static_cast<float>(base.blueF() + (text.blueF() - base.blueF()) * kGridAlpha));
  const bool antialiased = painter.testRenderHint(QPainter::Antialiasing);

  // Grid and GiB axis.
  const QRectF& plot = layout.plot;
  for (double b = 0; b <= layout.axis_bytes; b += layout.tick_step_bytes) {
    const double y = plot.bottom() - b * layout.px_per_byte;
    painter.setPen(grid);
    painter.setRenderHint(QPainter::Antialiasing, false);
    painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    painter.setRenderHint(QPainter::Antialiasing, antialiased);  // text keeps the caller's hint
    painter.setPen(text);
    const double gib = b / kGiB;
    painter.drawText(QRectF(area.left(), y - 10, kLeft - 8, 20), Qt::AlignRight | Qt::AlignVCenter,
                     format_fixed(gib, gib < 10 && layout.tick_step_bytes < kGiB ? 1 : 0) + QStringLiteral(" GiB"));
  }

  // Bars, one fill per segment (antialiasing off: edges on the pixel grid, heights exact).
  painter.setRenderHint(QPainter::Antialiasing, false);
  painter.setPen(Qt::NoPen);
  for (const auto& s : layout.segments) painter.fillRect(s.rect, memory_part_colour(s.part));

  // Stage labels and totals.
  const std::size_t n = memory.stages.size();
  const std::size_t label_every =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(44.0 * static_cast<double>(n) / plot.width())));
  for (std::size_t i = 0; i < n; ++i) {
    if (i % label_every != 0 && static_cast<std::int64_t>(i) != memory.most_loaded_stage) continue;
    const QRectF& bar = layout.bars[i];
    QFont f = font;
    f.setBold(static_cast<std::int64_t>(i) == memory.most_loaded_stage);
    painter.setFont(f);
    painter.setPen(text);
    const double cx = bar.center().x();
    painter.drawText(QRectF(cx - 40, plot.bottom() + 4, 80, 18), Qt::AlignHCenter | Qt::AlignTop,
                     QStringLiteral("stage %1").arg(memory.stages[i].stage));
    if (bar.width() >= 36) {
      painter.drawText(QRectF(cx - 40, bar.top() - 18, 80, 16), Qt::AlignHCenter | Qt::AlignBottom,
                       format_fixed(memory.stages[i].memory.total_bytes() / kGiB, 1));
    }
  }
  painter.setFont(font);

  // Capacity line.
  if (memory.capacity_bytes > 0) {
    const QColor alert = alert_colour(palette);
    painter.setPen(QPen(alert, 1.5, Qt::DashLine));
    painter.drawLine(QPointF(plot.left(), layout.capacity_y), QPointF(plot.right(), layout.capacity_y));
    painter.setPen(alert);
    const QString label = QStringLiteral("capacity %1%2")
                              .arg(format_gib(memory.capacity_bytes),
                                   gpu_name.isEmpty() ? QString() : QStringLiteral(" (") + gpu_name + QLatin1Char(')'));
    painter.drawText(QRectF(plot.left(), layout.capacity_y - 18, plot.width() - 4, 16),
                     Qt::AlignRight | Qt::AlignBottom, label);
  }

  // Legend along the top.
  double x = plot.left();
  for (std::size_t p = 0; p < kMemoryPartCount; ++p) {
    const auto part = static_cast<MemoryPart>(p);
    painter.fillRect(QRectF(x, area.top() + 8, 12, 12), memory_part_colour(part));
    painter.setPen(text);
    const QString name = memory_part_name(part);
    painter.drawText(QPointF(x + 16, area.top() + 18), name);
    x += 16 + painter.fontMetrics().horizontalAdvance(name) + 14;
  }
  painter.restore();
}

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(320, 220);
}

void MemoryChart::setMemory(const estimator::MemoryEstimate& memory, const QString& gpu_name) {
  memory_ = memory;
  gpu_name_ = gpu_name;
  update();
}

void MemoryChart::paintChart(QPainter& painter, const QRectF& area) const {
  paint_memory_chart(painter, memory_, area, palette(), font(), gpu_name_);
}

void MemoryChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  paintChart(painter, rect());
}

QString MemoryChart::toolTipAt(const QPointF& pos) const {
  const MemoryChartLayout layout = currentLayout();
  for (const auto& s : layout.segments) {
    if (!s.rect.contains(pos)) continue;
    const auto& stage = memory_.stages[s.stage];
    const double total = stage.memory.total_bytes();
    return QStringLiteral("<b>Stage %1</b> (%2 layers): %3<br>%4 = %5<br>total %6 = %7")
        .arg(stage.stage)
        .arg(stage.layers)
        .arg(memory_part_name(s.part), format_gib(s.bytes), format_bytes_exact(s.bytes), format_gib(total),
             format_bytes_exact(total));
  }
  if (std::abs(pos.y() - layout.capacity_y) <= 3 && layout.plot.contains(QPointF(layout.plot.center().x(), pos.y()))) {
    return QStringLiteral("capacity %1 = %2")
        .arg(format_gib(memory_.capacity_bytes), format_bytes_exact(memory_.capacity_bytes));
  }
  return {};
}

bool MemoryChart::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = toolTipAt(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace plansight::gui
