// The rectangles one frame of the timeline draws, built apart from any painting backend
// (qt-creator's tracing habit) so that tests check them without pixels. Per row only the visible
// index range is walked; spans narrower than a fold cell (2 device px) merge into one run, and a
// run jumps over the rest of its cell by a galloping search on the running max of ends (tracy's
// folding), so a zoomed-out million-span row costs O(cells x log) and not O(spans); touching runs
// of one colour join, and rectangles are batched per colour for one fill call each.
#pragma once

#include <QRectF>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "plansight/gui/theme.h"
#include "plansight/gui/timeline_coordinates.h"
#include "plansight/gui/timeline_index.h"

namespace plansight::gui {

struct TimelineRow {
  std::size_t track = 0;
  double y = 0;  // top in the paint target, logical px
  double height = 0;
};

struct SpanLabel {
  QRectF rect;
  std::size_t track = 0;
  std::size_t span = 0;
};

struct TimelineGeometry {
  std::array<std::vector<QRectF>, kSpanStyleCount> fills;  // one batch per style
  std::vector<QRectF> bubbles;
  std::vector<SpanLabel> labels;  // spans wide enough for text
  std::size_t spans_visited = 0;  // spans walked: the cost of the frame

  void clear();  // keeps capacity, so that frames do not allocate
  std::size_t rect_count() const;
};

struct GeometryOptions {
  double x_offset = 0;  // x of the axis origin in the paint target
  double device_pixel_ratio = 1;
  double fold_device_px = 2;                         // spans narrower than this merge with their neighbours
  double min_label_px = 16;                          // spans at least this wide get a label
  double inset_px = 1;                               // vertical margin of a span inside its row
  const std::vector<std::size_t>* reveal = nullptr;  // per track: spans shown (step-through)
  std::int64_t bubbles_until_ns = std::numeric_limits<std::int64_t>::max();
};

void build_geometry(const TimelineIndex& index, const TimeAxis& axis, const std::vector<TimelineRow>& rows,
                    const GeometryOptions& options, TimelineGeometry& out);

}  // namespace plansight::gui
