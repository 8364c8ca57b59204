// Paints one frame of the timeline with QPainter: row stripes, grid, bubbles, one fill call per
// span colour, span labels, the hovered span's outline, row labels and the time ruler. The same
// renderer serves the widget, PNG/SVG export and the paint benchmark; it keeps its geometry
// buffers between frames so that panning does not allocate.
#pragma once

#include <QFont>
#include <QPalette>
#include <QRect>
#include <QSizeF>
#include <QString>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "plansight/gui/timeline_geometry.h"

class QPainter;

namespace plansight::gui {

// Vertical layout: a taller row for compute lanes, a gap between ranks.
inline constexpr double kComputeRowPx = 24;
inline constexpr double kOtherRowPx = 15;
inline constexpr double kRankGapPx = 4;

// Every track in display order with its y, starting at `top`.
std::vector<TimelineRow> layout_rows(const TimelineIndex& index, double top);
double rows_height(const TimelineIndex& index);
// The row containing y, or nullptr.
const TimelineRow* row_at(const std::vector<TimelineRow>& rows, double y);

struct TimelineScene {
  TimeAxis axis;             // of the plot area (width_px = plot width)
  QSizeF size;               // the whole target, logical px
  double label_width = 150;  // row-label column on the left
  double ruler_height = 22;  // time ruler on top
  double scroll_y = 0;       // rows scrolled up by this much
  double device_pixel_ratio = 1;
  const std::vector<std::size_t>* reveal = nullptr;  // step-through: spans shown per track
  std::int64_t reveal_until_ns = std::numeric_limits<std::int64_t>::max();
  std::ptrdiff_t highlight_track = -1;
  std::ptrdiff_t highlight_span = -1;
  std::vector<QString> track_notes;  // per track index, right-aligned in the label column
  QPalette palette;
  QFont font;
};

class TimelineRenderer {
 public:
  void paint(QPainter& painter, const TimelineIndex& index, const TimelineScene& scene);
  const TimelineGeometry& geometry() const { return geometry_; }

 private:
  void paint_labels(QPainter& painter, const TimelineIndex& index, const TimelineScene& scene);
  void paint_chrome(QPainter& painter, const TimelineIndex& index, const TimelineScene& scene);

  TimelineGeometry geometry_;
  std::vector<QRect> device_rects_;
  std::vector<TimelineRow> rows_;
  std::vector<TimelineRow> visible_rows_;
};

// Short label of a track: "r3 compute".
QString track_label(const estimator::Track& track);

}  // namespace plansight::gui
