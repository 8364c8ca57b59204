// Colours and names of what the charts draw: span styles of the timeline, memory components and
// time-breakdown parts. Mid-saturation hues (Tableau 10 family) that read on both the light and
// the dark system palette; chrome (background, grid, text) always comes from the QPalette.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>
#include <array>
#include <cstddef>

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/timeline.h"

namespace plansight::gui {

// How a span is drawn: by phase first (what the schedule did), then by kind (what ran).
enum class SpanStyle : std::uint8_t { forward, backward, weight_grad, recompute, optimizer, collective, p2p, other };
inline constexpr std::size_t kSpanStyleCount = 8;

// Inline: it runs once per drawn span.
inline SpanStyle style_of(const estimator::Span& span) {
  using estimator::Phase;
  switch (span.phase) {
    case Phase::forward:
      return SpanStyle::forward;
    case Phase::backward:
      return SpanStyle::backward;
    case Phase::weight_grad:
      return SpanStyle::weight_grad;
    case Phase::recompute:
      return SpanStyle::recompute;
    case Phase::optimizer:
      return SpanStyle::optimizer;
    case Phase::communication:
    case Phase::none:
      break;
  }
  switch (span.kind) {
    case estimator::SpanKind::collective:
      return SpanStyle::collective;
    case estimator::SpanKind::send:
    case estimator::SpanKind::recv:
      return SpanStyle::p2p;
    default:
      break;
  }
  return span.phase == Phase::communication ? SpanStyle::collective : SpanStyle::other;
}
QString style_name(SpanStyle style);
QColor style_colour(SpanStyle style);

enum class MemoryPart : std::uint8_t { weights, gradients, optimizer, activations, buffers, reserve };
inline constexpr std::size_t kMemoryPartCount = 6;

QString memory_part_name(MemoryPart part);
QColor memory_part_colour(MemoryPart part);
double memory_part_bytes(const estimator::MemoryBreakdown& memory, MemoryPart part);

// ep_comm: the expert all-to-all of MoE models (zero for dense ones).
enum class TimePart : std::uint8_t { compute, tp_comm, cp_comm, pp_comm, dp_comm, bubble, optimizer, ep_comm };
inline constexpr std::size_t kTimePartCount = 8;

QString time_part_name(TimePart part);
// What a part of the iteration's breakdown counts (estimate.h, TimeBreakdown), as its tooltip
// says: the breakdown divides the first stage's iteration among its causes, which is not the
// Timeline page's per-rank communication (every collective's time on the lane that compute does
// not hide, rank_breakdown()).
QString time_part_meaning(TimePart part);
QColor time_part_colour(TimePart part);
double time_part_seconds(const estimator::TimeBreakdown& breakdown, TimePart part);

// Idle pipeline time (bubbles) on the timeline: a translucent red that tints either palette.
QColor bubble_colour();
// The capacity line of the memory chart and the colour of error messages.
QColor alert_colour(const QPalette& palette);
QColor warning_colour(const QPalette& palette);
// Black or white, whichever reads better on `fill`.
QColor text_on(const QColor& fill);
// True when the palette's window is dark (dark mode).
bool is_dark(const QPalette& palette);

}  // namespace plansight::gui
