// Private to the pipeline simulator: the SimulationInput converted to integer nanoseconds and
// checked once (errors name the field), and the first-fit communication lane. Kept apart so the
// simulator file holds only the event loop.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/schedule_metrics.h"

namespace plansight::estimator {

std::int64_t seconds_to_ns(double seconds);  // rounded to the nearest nanosecond

struct NsSegment {
  Lane lane;
  Phase phase;  // the op's phase on the compute lane, Phase::communication on the other
  std::int64_t ns;
  double flops, bytes;
  std::int32_t label;  // OpSegment::label: -1, or the index of its name in SimulationInput::labels
  friend bool operator==(const NsSegment&, const NsSegment&) = default;
};

// What a list of segments comes to when run back to back from some start t with the lane free
// from its first lane segment on (t + first_lane): no collective waits, so the list ends at
// t + ns whatever else the rank has booked before. The simulator's common case, run in O(1)
// instead of segment by segment (pipeline_simulator.cpp).
struct NsRunShape {
  static constexpr std::int64_t kNone = INT64_MAX / 4;  // no lane segment; sums stay far from overflow
  std::int64_t ns = 0;                   // start to end
  std::int64_t compute_ns = 0;           // of which compute
  std::int64_t first_lane = kNone;       // offset of the first lane segment's start
  std::int64_t compute_first = -1;       // offset of the first compute's start; -1: no compute
  std::int64_t compute_end = -1;         // offset of the last compute's end; -1: no compute
  friend bool operator==(const NsRunShape&, const NsRunShape&) = default;
};
NsRunShape run_shape(const std::vector<NsSegment>& segments);
// `first` then `second`, back to back (a backward's recomputation, then the backward).
NsRunShape then(const NsRunShape& first, const NsRunShape& second);

struct NsChunkCost {  // one chunk, in nanoseconds
  std::vector<NsSegment> forward, backward, weight_grad, recompute;
  std::vector<NsSegment> fused_backward;  // no W ops: backward then weight_grad, as phase B
  // The overlapped segments (OpSegment::overlapped) of each, drawn only; the lists above hold
  // the timed ones.
  struct Overlapped {
    std::vector<NsSegment> forward, backward, weight_grad, recompute, fused_backward;
    bool empty() const { return forward.empty() && backward.empty() && weight_grad.empty() && recompute.empty(); }
    friend bool operator==(const Overlapped&, const Overlapped&) = default;
  } overlapped;
  std::int64_t send_activation = 0, send_gradient = 0, dp_reduce = 0, param_gather = 0;
  double dp_reduce_bytes = 0;
  bool param_prefetch = true;
  // The shapes of an op's whole run, recomputation included (kShape*).
  static constexpr std::size_t kShapeForward = 0, kShapeBackward = 1, kShapeWeightGrad = 2, kShapeFusedBackward = 3;
  std::array<NsRunShape, 4> shapes{};
  friend bool operator==(const NsChunkCost&, const NsChunkCost&) = default;
};

// Every global chunk's cost as the engine reads it: the distinct costs, each converted once, and
// the one each chunk has (SimulationInput::chunk_of). The time model's 256 chunks of a 64 x 4
// plan have three (the first, the middle ones, the last): converted, copied and freed one by
// one they were about a tenth of a 64-stage estimate's set-up (bench/results/time-core-cpu.txt).
struct NsCosts {
  std::vector<NsChunkCost> distinct;
  std::vector<std::uint32_t> of;  // per global chunk: its index in `distinct`
  const NsChunkCost& operator[](std::size_t g) const { return distinct[of[g]]; }
  std::size_t chunks() const { return of.size(); }
};

class SteadyPeriods;  // steady_state.h

// simulate() without check_schedule(), for tables made by make_schedule(), which are well formed
// by construction (pipeline_schedule_test checks every generator with check_schedule()). Runs of
// one table may share `periods`, its steady periods, found once (the first run to need them).
Result<SimulationResult> simulate_well_formed(const ScheduleTable& table, const SimulationInput& input,
                                              SteadyPeriods* periods = nullptr);
// The same for a table as the simulation reads it (schedule_rows.h), sparse or whole.
struct SimulationTable;
Result<SimulationResult> simulate_well_formed(const SimulationTable& table, const SimulationInput& input,
                                              SteadyPeriods* periods = nullptr);

// DualPipe mirrors itself when both pipelines cost the same stage by stage (its chunk s and
// p + s, stage s of each model copy; `input` is DualPipe's, p ranks): rank p-1-r runs rank r's
// list with the pipelines swapped (make_schedule's dualpipe_rank), so with the same costs each of
// its ops runs at the same time as its mirror on rank r, and every figure of rank p-1-r is rank
// r's. The lower half then runs on its own: what it receives from the upper half (the second
// pipeline's forwards into its chunk p + p/2, the first's gradients into its chunk p/2 - 1) is,
// mirrored, what it sends there. As a table that is DualPipeV's V of p/2 ranks and m/2
// micro-batches (dualpipe_rank is dualpipev_rank of the half, the second pipeline's micro-batches
// m/2 later), chunk g of the V being DualPipe's chunk g on the way down and p + g on the way
// back up, except that the turn at the V's bottom crosses to rank p/2 in DualPipe, so its sends
// take their time on the lane: make_dualpipe_lower_half(), which checks p and m as
// make_schedule() checks them for DualPipe. Half the ops, the same figures (dualpipe_mirror_test
// checks every one against the whole table's run). Without a shared processor model and without
// a timeline (whose spans would be the upper half's too) only.
bool dualpipe_mirrors(const SimulationInput& input, std::int64_t p);
// Whether the ranks' threads outnumber the processors they share (the shared processor model,
// shared_processor_simulator.h), for a table of `ranks` ranks.
bool shares_processors(const SimulationInput& input, std::int64_t ranks);
Result<ScheduleTable> make_dualpipe_lower_half(std::int64_t p, std::int64_t m, ScheduleOptions options);
// DualPipe's figures, all p ranks', from a run of its lower half (half: make_dualpipe_lower_half's,
// which is well formed as simulate_well_formed() needs; input: DualPipe's). An error naming
// simulation.chunks when dualpipe_mirrors() is false.
Result<SimulationResult> simulate_dualpipe_lower_half(const ScheduleTable& half, const SimulationInput& input,
                                                      SteadyPeriods* periods = nullptr);
Result<SimulationResult> simulate_dualpipe_lower_half(const SimulationTable& half, const SimulationInput& input,
                                                      SteadyPeriods* periods = nullptr);

// The input's chunk costs for `stages` global chunks, each of input.chunks converted once.
// Errors: chunk count not 1 or `stages` without chunk_of, or chunk_of not `stages` indices of
// input.chunks ("simulation.chunks", "simulation.chunk_of"), negative or non-finite times
// ("simulation.chunks[3].forward", ...), "simulation.dp_buckets".
Result<NsCosts> to_ns_costs(const SimulationInput& input, std::size_t stages);

// The engine's ending (iteration_engine.h): the per-rank bubbles (schedule_metrics.h) into `result`.
void set_bubbles(SimulationResult& result, const ScheduleBubbles& bubbles, std::int32_t ranks);

// "deadlock: rank 1 waits at op 3 (B chunk 0 micro-batch 2); ..." for every rank whose next op
// (next[r]) was never run; empty when every rank finished.
class ScheduleRows;  // schedule_rows.h
std::string deadlock_message(std::int32_t ranks, const ScheduleRows& rows, const std::vector<std::size_t>& next);

// One communication lane: busy intervals sorted by start, never overlapping. Work is placed
// first-fit, so work issued "ahead" (a prefetch, a gradient bucket issued mid-op) takes the
// earliest gap at or after its issue time rather than queueing behind later-issued work.
class CommLane {
 public:
  // Earliest start >= issue where the lane is free for ns; books it and returns the start.
  [[gnu::always_inline]] std::int64_t place(std::int64_t issue, std::int64_t ns) {
    if (ns <= 0) return issue;
    if (busy_.empty() || issue >= busy_.back().end) {  // the common case: after all booked work
      if (!busy_.empty() && issue == busy_.back().end) {
        busy_.back().end += ns;  // touching: one interval, so later searches stay short
      } else {
        busy_.push_back(Busy{issue, issue + ns});
      }
      return issue;
    }
    return place_in_gap(issue, ns);
  }
  std::int64_t end() const { return busy_.empty() ? 0 : busy_.back().end; }
  // Forgets the intervals that end by `t`, once they are most of a long list: the caller
  // promises no work is issued before `t` again, so place(), tail() and shift_tail() from `t` on
  // can never meet them. A lane then stays a few cache lines long instead of holding every
  // interval of the iteration (a 64-stage interleaved run wrote 8 MB of them per simulation).
  // Amortised O(1) per call.
  void forget_before(std::int64_t t) {
    if (busy_.size() < kForgetAtIntervals) return;
    const auto dead = last_after(t) - busy_.cbegin();
    if (2 * static_cast<std::size_t>(dead) >= busy_.size()) busy_.erase(busy_.begin(), busy_.begin() + dead);
  }
  void clear() { busy_.clear(); }  // keeps the capacity, for a lane used again
  std::size_t capacity_bytes() const { return busy_.capacity() * sizeof(Busy); }

  // What of the lane lies after `from`, as [start, end) pairs clipped at `from` with touching
  // ones joined, appended to `out`: all that work issued at or after `from` can meet (place()
  // never looks at booked work that ends before the issue time).
  void tail(std::int64_t from, std::vector<std::int64_t>& out) const {
    const std::size_t begin = out.size();
    for (auto it = last_after(from); it != busy_.end(); ++it) {
      if (out.size() > begin && out.back() == it->start) {
        out.back() = it->end;  // touching intervals as one: the same busy time, one way to write it
      } else {
        out.push_back(std::max(it->start, from));
        out.push_back(it->end);
      }
    }
  }
  // Moves that tail `by` later (the steady state's skip, steady_state.h); what ends by `from`
  // stays where it is.
  void shift_tail(std::int64_t from, std::int64_t by) {
    for (auto it = busy_.begin() + (last_after(from) - busy_.cbegin()); it != busy_.end(); ++it) {
      it->start = std::max(it->start, from) + by;
      it->end += by;
    }
  }

 private:
  // Work issued before booked work ends: the first gap at or after `issue` that holds it.
  [[gnu::noinline]] std::int64_t place_in_gap(std::int64_t issue, std::int64_t ns) {
    auto it = std::upper_bound(busy_.begin(), busy_.end(), issue,
                               [](std::int64_t t, const Busy& b) { return t < b.end; });
    std::int64_t start = issue;
    while (it != busy_.end() && it->start < start + ns) {
      start = std::max(start, it->end);
      ++it;
    }
    busy_.insert(it, Busy{start, start + ns});
    return start;
  }

  struct Busy {
    std::int64_t start, end;
  };
  // The first interval that ends after t, for a t near the lane's end (the start of a rank's
  // last op): a walk back over the few intervals after it, not a binary search whose probes miss
  // the cache on a lane that holds every interval of the iteration.
  std::vector<Busy>::const_iterator last_after(std::int64_t t) const {
    auto it = busy_.end();
    while (it != busy_.begin() && std::prev(it)->end > t) --it;
    return it;
  }
  static constexpr std::size_t kForgetAtIntervals = 64;
  std::vector<Busy> busy_;
};

}  // namespace plansight::estimator
