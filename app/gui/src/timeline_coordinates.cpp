// Time <-> x mapping and ruler ticks (see timeline_coordinates.h).
#include "plansight/gui/timeline_coordinates.h"

#include <algorithm>
#include <cmath>

namespace plansight::gui {

double TimeAxis::ns_per_px() const { return static_cast<double>(span_ns()) / width_px; }

double TimeAxis::x_of(std::int64_t t_ns) const {
  return static_cast<double>(t_ns - begin_ns) * width_px / static_cast<double>(span_ns());
}

std::int64_t TimeAxis::ns_at(double x) const {
  return begin_ns + static_cast<std::int64_t>(std::llround(x * ns_per_px()));
}

TimeAxis TimeAxis::zoomed(double factor, double anchor_x, std::int64_t min_span_ns) const {
  if (!(factor > 0) || !std::isfinite(factor)) return *this;
  const double anchor_ns = static_cast<double>(begin_ns) + anchor_x * ns_per_px();
  double span = static_cast<double>(span_ns()) / factor;
  span = std::max(span, static_cast<double>(std::max<std::int64_t>(min_span_ns, 1)));
  span = std::min(span, 9.0e18);  // stays inside int64
  const double fraction = anchor_x / width_px;
  TimeAxis out = *this;
  out.begin_ns = static_cast<std::int64_t>(std::llround(anchor_ns - fraction * span));
  out.end_ns = out.begin_ns + std::max<std::int64_t>(static_cast<std::int64_t>(std::llround(span)), 1);
  return out;
}

TimeAxis TimeAxis::panned(double dx_px) const {
  const auto shift = static_cast<std::int64_t>(std::llround(dx_px * ns_per_px()));
  TimeAxis out = *this;
  out.begin_ns += shift;
  out.end_ns += shift;
  return out;
}

TimeAxis TimeAxis::clamped(std::int64_t data_begin_ns, std::int64_t data_end_ns) const {
  if (data_end_ns <= data_begin_ns) data_end_ns = data_begin_ns + 1;
  if (span_ns() >= data_end_ns - data_begin_ns) return fit_axis(data_begin_ns, data_end_ns, width_px);
  TimeAxis out = *this;
  if (out.begin_ns < data_begin_ns) {
    out.end_ns += data_begin_ns - out.begin_ns;
    out.begin_ns = data_begin_ns;
  } else if (out.end_ns > data_end_ns) {
    out.begin_ns -= out.end_ns - data_end_ns;
    out.end_ns = data_end_ns;
  }
  return out;
}

TimeAxis TimeAxis::resized(double width) const {
  TimeAxis out = *this;
  out.width_px = width > 0 ? width : 1;
  return out;
}

TimeAxis fit_axis(std::int64_t begin_ns, std::int64_t end_ns, double width_px) {
  TimeAxis axis;
  axis.begin_ns = begin_ns;
  axis.end_ns = end_ns > begin_ns ? end_ns : begin_ns + 1;
  axis.width_px = width_px > 0 ? width_px : 1;
  return axis;
}

Ticks nice_ticks(const TimeAxis& axis, double min_spacing_px, std::int64_t origin_ns) {
  Ticks ticks;
  const double wanted = std::max(min_spacing_px, 1.0) * axis.ns_per_px();
  double decade = std::pow(10.0, std::floor(std::log10(std::max(wanted, 1.0))));
  double step = decade;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * decade;
    if (step >= wanted) break;
  }
  ticks.step_ns = std::max<std::int64_t>(static_cast<std::int64_t>(std::llround(step)), 1);
  // First origin + k * step at or after begin_ns (C++ division truncates; fix negative offsets).
  const std::int64_t offset = axis.begin_ns - origin_ns;
  std::int64_t first = origin_ns + offset / ticks.step_ns * ticks.step_ns;
  if (first < axis.begin_ns) first += ticks.step_ns;
  for (std::int64_t t = first; t <= axis.end_ns; t += ticks.step_ns) ticks.at_ns.push_back(t);
  return ticks;
}

}  // namespace plansight::gui
