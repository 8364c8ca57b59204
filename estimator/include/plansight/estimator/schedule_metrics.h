// Pipeline metrics as pure functions of a Timeline, so that a predicted, a measured and an
// imported iteration are judged by the same rule: per-rank pipeline bubble, and an ASCII picture
// of the compute lanes (`plansight timeline --ascii`). General overlap and idle breakdowns are
// another file's job (timeline_metrics.cpp); this one answers "what did the pipeline cost".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/interval_set.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// Bubble of one iteration, per rank: the one definition behind every bubble figure of a
// predicted iteration (the estimate, the CLI, the Time & cost and Timeline pages, sweeps, search).
//  - window: from the earliest start to the latest end of any pipeline compute (compute-lane span
//    of phase forward, backward, weight_grad or recompute) over ALL ranks: the pipeline flush is
//    the common end.
//  - the rank's pipeline work: its pipeline compute and the collectives of its micro-batches
//    (SpanKind::collective spans tagged with a micro-batch: the TP/CP/EP collectives inside its
//    ops), from the first to the last of them (its extent).
//  - bubble_ns: window time outside the rank's extent (the pipeline's fill and drain), and time
//    inside it in which the rank runs no pipeline work and no other collective. Idle time facing
//    an exposed TP/DP/ZeRO collective between its ops is exposed communication, not bubble; idle
//    time facing a p2p send/recv or nothing is bubble, and so is the drain even where the rank
//    reduces its gradients in it (with no drain to hide in, that reduction would be exposed, so
//    the bubble does not shrink when data-parallel overlap is turned off).
//  - busy_ns: the rest of the window = the rank's pipeline work, its exposed collectives
//    included: the "ideal time" m (t_f + t_b) of Narayanan et al. 2021, Sec. 2.2, whose per-stage
//    t_f and t_b include the stage's tensor-parallel communication.
//    An optimizer step inside the window does not hide bubble: the step waits for every stage's
//    gradients in a real run (Megatron-LM's gradient-norm clip and loss-scale check are global),
//    so only where a simulation places it early would it overlap the window.
//  - fraction = bubble_ns / busy_ns; reported as the mean over ranks and the worst rank.
//    bubble_ns + busy_ns is the window on every rank.
// With uniform stages and no communication this gives (p-1)/m for GPipe and 1F1B and
// (p-1)/(v*m) for interleaved 1F1B (Narayanan et al. 2021, Sec. 2.2), on every rank.
// Measured and imported timelines get the same definition through timeline_metrics.h's
// pipeline_bubbles(), which finds compute and communication by kernel name and ignores gaps
// shorter than a kernel launch; on a predicted timeline it gives this function's numbers.
// Caveat for measured traces: a collective kernel that spins waiting for peers counts as
// communication, not bubble (a point-to-point kernel's wait is bubble).
struct ScheduleBubbles {
  std::int64_t window_begin_ns = 0;
  std::int64_t window_end_ns = 0;
  std::vector<std::int32_t> ranks;      // ranks with a compute lane, ascending
  std::vector<std::int64_t> busy_ns;    // per entry of ranks
  std::vector<std::int64_t> bubble_ns;  // per entry of ranks
  std::vector<double> fraction;         // per entry of ranks; 0 when busy_ns is 0
  std::vector<std::int32_t> idle_intervals;  // per entry of ranks: the idle stretches counted
  double mean_fraction = 0;             // mean of fraction
  double max_fraction = 0;
};

ScheduleBubbles schedule_bubbles(const Timeline& timeline);

// Where each rank's bubble lies, as schedule_bubbles() counts it (for drawing): per rank with a
// compute lane, ascending, sorted disjoint intervals whose lengths add up to its bubble_ns.
struct RankBubbleIntervals {
  std::int32_t rank = 0;
  std::vector<Interval> intervals;
};
std::vector<RankBubbleIntervals> bubble_intervals(const Timeline& timeline);

// One rank's activity in the form the bubble needs, so that the simulator, which never builds
// spans for an estimate, computes the same bubble as schedule_bubbles(Timeline) from what it
// records as it runs (pipeline_simulator.cpp; a test holds the two equal on every schedule).
struct RankActivity {
  std::int32_t rank = 0;
  // First start and last end of its pipeline compute; begin > end: none.
  std::int64_t compute_begin_ns = 0, compute_end_ns = -1;
  // Further gap time inside the window that no collective overlaps, as a sum (the simulator's
  // common case, kept out of `gaps` to keep the list short). Beside the compute window: the
  // simulator's op loop reads the three each time it takes up a rank, from one cache line.
  std::int64_t clear_gap_ns = 0;
  // Its pipeline work (pipeline compute and the collectives of its micro-batches) as its extent
  // and the sorted, disjoint gaps inside it; begin > end: none.
  std::int64_t occupied_begin_ns = 0, occupied_end_ns = -1;
  std::vector<Interval> gaps;
  // Its other collectives in any order, overlapping anything: they fill gaps, nothing else.
  std::vector<Interval> collectives;
};

// The bubbles of ranks described by their activity (entries in ascending rank order). Gaps
// (listed ones) shorter than min_gap_ns are not counted: between measured kernels they are
// launch latency, not the pipeline waiting (a predicted timeline has none to drop).
ScheduleBubbles schedule_bubbles(std::vector<RankActivity> ranks, std::int64_t min_gap_ns = 0);
// The same, reading `ranks` where they are: a rank's collectives may be left merged (sorted and
// joined), its other fields stay as they were. The simulator's, which keeps the lists for its
// next run.
ScheduleBubbles schedule_bubbles_in_place(std::vector<RankActivity>& ranks, std::int64_t min_gap_ns = 0);

// ASCII picture of the compute lanes: one row per rank, `width` characters spanning the
// timeline's [begin_ns, end_ns) in equal time buckets. A bucket shows the phase that covers most
// of it if compute spans cover at least half of it, else '.':
//   F forward, B backward, W weight_grad, R recompute, O optimizer, # any other compute, . idle.
// Rows are "r<rank> |<width characters>|\n", rank labels padded to equal width. width < 1 is
// treated as 1; a timeline without compute spans renders as "".
std::string render_ascii(const Timeline& timeline, int width);

}  // namespace plansight::estimator
