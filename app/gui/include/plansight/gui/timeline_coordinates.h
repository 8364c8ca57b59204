// Time <-> x mapping of the timeline view, as a plain value type with no painting, so that its
// maths is tested with data tables. Times are the Timeline's int64 ns; x is in logical pixels as a
// double, so that deep zoom keeps sub-pixel precision. Every function states its contract.
#pragma once

#include <cstdint>
#include <vector>

namespace plansight::gui {

struct TimeAxis {
  std::int64_t begin_ns = 0;  // time at x = 0
  std::int64_t end_ns = 1;    // time at x = width_px; always > begin_ns
  double width_px = 1;        // always > 0

  std::int64_t span_ns() const { return end_ns - begin_ns; }
  // Nanoseconds one logical pixel covers.
  double ns_per_px() const;
  // x of time t: linear and unclamped (t before begin_ns gives x < 0).
  double x_of(std::int64_t t_ns) const;
  // Time at x, rounded to the nearest ns; unclamped.
  std::int64_t ns_at(double x) const;
  // Zoom by `factor` (> 1 zooms in) keeping the time under anchor_x where it is; the visible
  // span never drops below min_span_ns.
  TimeAxis zoomed(double factor, double anchor_x, std::int64_t min_span_ns = 100) const;
  // Pan by dx logical pixels; dx > 0 brings later times into view.
  TimeAxis panned(double dx_px) const;
  // The same view kept inside [data_begin_ns, data_end_ns]: moved, never resized, when narrower
  // than the data; the whole data range when wider.
  TimeAxis clamped(std::int64_t data_begin_ns, std::int64_t data_end_ns) const;
  // Same visible range on a new width.
  TimeAxis resized(double width_px) const;
};

// The whole [begin_ns, end_ns] across width_px (an empty range widened to 1 ns).
TimeAxis fit_axis(std::int64_t begin_ns, std::int64_t end_ns, double width_px);

// Ruler ticks at 1-2-5 x 10^k ns steps, the smallest step at least min_spacing_px apart: every
// origin_ns + k * step inside the visible range (the origin is where the ruler reads 0).
struct Ticks {
  std::int64_t step_ns = 1;
  std::vector<std::int64_t> at_ns;
};
Ticks nice_ticks(const TimeAxis& axis, double min_spacing_px, std::int64_t origin_ns = 0);

}  // namespace plansight::gui
