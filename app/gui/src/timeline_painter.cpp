// QPainter backend of the timeline (see timeline_painter.h).
#include "plansight/gui/timeline_painter.h"

#include <QFontMetricsF>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <string_view>

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace est = plansight::estimator;

std::vector<TimelineRow> layout_rows(const TimelineIndex& index, double top) {
  std::vector<TimelineRow> rows;
  rows.reserve(index.track_count());
  double y = top;
  std::int32_t previous_rank = 0;
  bool first = true;
  for (std::size_t t : index.display_order()) {
    const auto& track = index.track(t);
    if (!first && track.rank != previous_rank) y += kRankGapPx;
    const double h = track.lane == est::Lane::compute ? kComputeRowPx : kOtherRowPx;
    rows.push_back({t, y, h});
    y += h;
    previous_rank = track.rank;
    first = false;
  }
  return rows;
}

double rows_height(const TimelineIndex& index) {
  const auto rows = layout_rows(index, 0);
  return rows.empty() ? 0 : rows.back().y + rows.back().height;
}

const TimelineRow* row_at(const std::vector<TimelineRow>& rows, double y) {
  const auto it = std::upper_bound(rows.begin(), rows.end(), y, [](double v, const TimelineRow& r) { return v < r.y; });
  if (it == rows.begin()) return nullptr;
  const TimelineRow& row = *(it - 1);
  return y < row.y + row.height ? &row : nullptr;
}

QString track_label(const est::Track& track) {
  QString lane =
      QString::fromLatin1(est::to_string(track.lane).data(), static_cast<qsizetype>(est::to_string(track.lane).size()));
  if (track.lane == est::Lane::communication) lane = QStringLiteral("comm");
  QString text = QStringLiteral("r%1 %2").arg(track.rank).arg(lane);
  // A predicted timeline's extra rows say what they hold (estimator: the layer view's sends,
  // the collectives compute hides); a measured one's are its streams.
  const auto ends_with = [&](std::string_view tail) {
    return track.label.size() >= tail.size() && track.label.compare(track.label.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (track.lane == est::Lane::communication && ends_with(" TP comm overlapped")) return QStringLiteral("r%1 hidden TP").arg(track.rank);
  if (track.lane == est::Lane::communication && ends_with(" comm overlapped")) return QStringLiteral("r%1 hidden comm").arg(track.rank);
  if (track.lane == est::Lane::communication && ends_with(" comm p2p")) return QStringLiteral("r%1 p2p").arg(track.rank);
  if (track.stream >= 0) text += QStringLiteral(" s%1").arg(track.stream);
  return text;
}

void TimelineRenderer::paint(QPainter& painter, const TimelineIndex& index, const TimelineScene& scene) {
  const QPalette& pal = scene.palette;
  const QRectF plot(scene.label_width, scene.ruler_height, scene.axis.width_px,
                    scene.size.height() - scene.ruler_height);
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, false);
  painter.fillRect(QRectF(QPointF(0, 0), scene.size), pal.color(QPalette::Base));

  rows_ = layout_rows(index, scene.ruler_height - scene.scroll_y);
  visible_rows_.clear();
  for (const auto& r : rows_) {
    if (r.y + r.height >= plot.top() && r.y <= plot.bottom()) visible_rows_.push_back(r);
  }

  painter.setClipRect(plot);
  painter.setPen(Qt::NoPen);
  // Zebra stripes per rank, so lanes of one rank read as a group.
  const QColor stripe = pal.color(QPalette::AlternateBase);
  for (const auto& r : visible_rows_) {
    if (index.track(r.track).rank % 2 == 1) painter.fillRect(QRectF(plot.left(), r.y, plot.width(), r.height), stripe);
  }
  QColor grid = pal.color(QPalette::Text);
  grid.setAlpha(40);
  const Ticks ticks = nice_ticks(scene.axis, 90, index.begin_ns());
  // Each translucent tick line is filled in pieces of at most 32 pixels: a taller blended fill is
  // handed to Qt's thread pool, whose wake-ups cost more than the fill (bench_timeline_paint,
  // EditPart/part:3).
  constexpr double kGridPiecePx = 32;
  for (std::int64_t t : ticks.at_ns) {
    const double x = plot.left() + scene.axis.x_of(t);
    for (double y = plot.top(); y < plot.bottom(); y += kGridPiecePx) {
      painter.fillRect(QRectF(x, y, 1.0 / scene.device_pixel_ratio, std::min(kGridPiecePx, plot.bottom() - y)), grid);
    }
  }

  GeometryOptions options;
  options.x_offset = plot.left();
  options.device_pixel_ratio = scene.device_pixel_ratio;
  options.reveal = scene.reveal;
  options.bubbles_until_ns = scene.reveal_until_ns;
  build_geometry(index, scene.axis, visible_rows_, options, geometry_);

  // Fills in whole device pixels under an identity device transform: Qt's raster engine then
  // takes its integer fast path (no per-rect float transform and normalisation).
  const double dpr = scene.device_pixel_ratio;
  const auto fill_batch = [&](const std::vector<QRectF>& rects, const QColor& colour) {
    if (rects.empty()) return;
    device_rects_.resize(rects.size());
    for (std::size_t i = 0; i < rects.size(); ++i) {
      const QRectF& r = rects[i];
      const int x0 = static_cast<int>(std::lround(r.left() * dpr));
      const int y0 = static_cast<int>(std::lround(r.top() * dpr));
      const int x1 = std::max(static_cast<int>(std::lround(r.right() * dpr)), x0 + 1);
      const int y1 = std::max(static_cast<int>(std::lround(r.bottom() * dpr)), y0 + 1);
      device_rects_[i] = QRect(x0, y0, x1 - x0, y1 - y0);
    }
    painter.setBrush(colour);
    painter.drawRects(device_rects_.data(), static_cast<int>(device_rects_.size()));
  };
  painter.save();
  painter.scale(1 / dpr, 1 / dpr);
  painter.setClipRect(QRectF(plot.left() * dpr, plot.top() * dpr, plot.width() * dpr, plot.height() * dpr));
  fill_batch(geometry_.bubbles, bubble_colour());
  for (std::size_t s = 0; s < kSpanStyleCount; ++s)
    fill_batch(geometry_.fills[s], style_colour(static_cast<SpanStyle>(s)));
  painter.restore();
  paint_labels(painter, index, scene);

  if (scene.highlight_track >= 0 && static_cast<std::size_t>(scene.highlight_track) < index.track_count()) {
    const auto t = static_cast<std::size_t>(scene.highlight_track);
    const auto& spans = index.track(t).spans;
    const auto* row =
        std::find_if(rows_.data(), rows_.data() + rows_.size(), [t](const TimelineRow& r) { return r.track == t; });
    if (scene.highlight_span >= 0 && static_cast<std::size_t>(scene.highlight_span) < spans.size() &&
        row != rows_.data() + rows_.size()) {
      const auto& s = spans[static_cast<std::size_t>(scene.highlight_span)];
      const double x0 = plot.left() + scene.axis.x_of(s.start_ns);
      const double x1 = plot.left() + scene.axis.x_of(s.end_ns());
      painter.setBrush(Qt::NoBrush);
      painter.setPen(QPen(pal.color(QPalette::Highlight), 2));
      painter.drawRect(QRectF(x0 - 1, row->y, std::max(x1 - x0, 1.0) + 2, row->height));
    }
  }
  painter.setClipping(false);
  paint_chrome(painter, index, scene);
  painter.restore();
}

void TimelineRenderer::paint_labels(QPainter& painter, const TimelineIndex& index, const TimelineScene& scene) {
  if (geometry_.labels.empty()) return;
  QFont font = scene.font;
  font.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
  painter.setFont(font);
  const QFontMetricsF fm(font);
  const double digit = fm.horizontalAdvance(QLatin1Char('0'));
  QColor pen_colour;
  for (const SpanLabel& label : geometry_.labels) {
    const auto& span = index.track(label.track).spans[label.span];
    const QString& name =
        index.timeline().name_of(span).empty() ? QString() : QString::fromStdString(index.timeline().name_of(span));
    QString text;
    if (!name.isEmpty() && fm.horizontalAdvance(name) + 4 <= label.rect.width()) {
      text = name;
    } else if (span.micro_batch >= 0) {
      const QString number = QString::number(span.micro_batch);
      if (digit * static_cast<double>(number.size()) + 4 <= label.rect.width()) text = number;
    }
    if (text.isEmpty()) continue;
    const QColor colour = text_on(style_colour(style_of(span)));
    if (colour != pen_colour) painter.setPen(pen_colour = colour);
    painter.drawText(label.rect, Qt::AlignCenter, text);
  }
  painter.setPen(Qt::NoPen);
}

void TimelineRenderer::paint_chrome(QPainter& painter, const TimelineIndex& index, const TimelineScene& scene) {
  const QPalette& pal = scene.palette;
  const QColor text = pal.color(QPalette::WindowText);
  QColor muted = text;
  muted.setAlpha(170);
  painter.setFont(scene.font);

  // Row labels.
  painter.fillRect(QRectF(0, scene.ruler_height, scene.label_width, scene.size.height()), pal.color(QPalette::Window));
  painter.setClipRect(QRectF(0, scene.ruler_height, scene.label_width, scene.size.height()));
  for (const auto& r : visible_rows_) {
    const QRectF cell(6, r.y, scene.label_width - 10, r.height);
    painter.setPen(text);
    painter.drawText(cell, Qt::AlignLeft | Qt::AlignVCenter, track_label(index.track(r.track)));
    if (r.track < scene.track_notes.size() && !scene.track_notes[r.track].isEmpty()) {
      painter.setPen(muted);
      painter.drawText(cell, Qt::AlignRight | Qt::AlignVCenter, scene.track_notes[r.track]);
    }
  }
  painter.setClipping(false);

  // Ruler: times relative to the timeline's start.
  painter.fillRect(QRectF(0, 0, scene.size.width(), scene.ruler_height), pal.color(QPalette::Window));
  painter.setPen(text);
  const Ticks ticks = nice_ticks(scene.axis, 90, index.begin_ns());
  for (std::int64_t t : ticks.at_ns) {
    const double x = scene.label_width + scene.axis.x_of(t);
    painter.drawLine(QPointF(x, scene.ruler_height - 5), QPointF(x, scene.ruler_height));
    painter.drawText(QPointF(x + 3, scene.ruler_height - 7), format_tick(t - index.begin_ns(), ticks.step_ns));
  }
  painter.setPen(QPen(pal.color(QPalette::Mid), 1));
  painter.drawLine(QPointF(0, scene.ruler_height - 0.5), QPointF(scene.size.width(), scene.ruler_height - 0.5));
  painter.drawLine(QPointF(scene.label_width - 0.5, 0), QPointF(scene.label_width - 0.5, scene.size.height()));
}

}  // namespace plansight::gui
