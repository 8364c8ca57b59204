// Pipeline metrics as pure functions of a Timeline, so that a predicted, a measured and an
// imported iteration are judged by the same rule: per-rank pipeline bubble, and an ASCII picture
// of the compute lanes (`plansight timeline --ascii`). General overlap and idle breakdowns are
// another file's job (timeline_metrics.cpp); this one answers "what did the pipeline cost".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// Bubble of one iteration, per rank. Definition:
//  - window: from the earliest start to the latest end of any compute-lane span that is not
//    phase optimizer, over ALL ranks (the pipeline flush is the common end; the optimizer step
//    after it is not pipeline time).
//  - busy_ns: time covered by the rank's non-optimizer compute-lane spans inside the window
//    (overlapping spans counted once) = the rank's ideal pipeline compute time.
//  - bubble_ns: window time in which the rank's compute lane is idle (no compute span of any
//    phase) and its communication lanes run no collective (SpanKind::collective). Idle time facing
//    an exposed TP/DP/ZeRO collective is exposed communication, not bubble; idle time facing a
//    p2p send/recv or nothing is bubble.
//  - fraction = bubble_ns / busy_ns.
// With uniform stages and no communication this gives (p-1)/m for GPipe and 1F1B and
// (p-1)/(v*m) for interleaved 1F1B (Narayanan et al. 2021, Sec. 2.2), on every rank.
// Caveat for measured traces: a collective kernel that spins waiting for peers counts as
// communication, not bubble. timeline_metrics.h's pipeline_bubbles() is the idle share of the
// window instead (bubble / window: (p-1)/(m+p-1)), ignoring gaps < 10 us; this one is relative to
// ideal compute, the form the schedule papers quote.
struct ScheduleBubbles {
  std::int64_t window_begin_ns = 0;
  std::int64_t window_end_ns = 0;
  std::vector<std::int32_t> ranks;      // ranks with a compute lane, ascending
  std::vector<std::int64_t> busy_ns;    // per entry of ranks
  std::vector<std::int64_t> bubble_ns;  // per entry of ranks
  std::vector<double> fraction;         // per entry of ranks; 0 when busy_ns is 0
  double mean_fraction = 0;             // mean of fraction
  double max_fraction = 0;
};

ScheduleBubbles schedule_bubbles(const Timeline& timeline);

// ASCII picture of the compute lanes: one row per rank, `width` characters spanning the
// timeline's [begin_ns, end_ns) in equal time buckets. A bucket shows the phase that covers most
// of it if compute spans cover at least half of it, else '.':
//   F forward, B backward, W weight_grad, R recompute, O optimizer, # any other compute, . idle.
// Rows are "r<rank> |<width characters>|\n", rank labels padded to equal width. width < 1 is
// treated as 1; a timeline without compute spans renders as "".
std::string render_ascii(const Timeline& timeline, int width);

}  // namespace plansight::estimator
