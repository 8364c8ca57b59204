// Private to the simulator: the iteration engine with dedicated processors (iteration_engine.h),
// its op loop and worklist here, its steady-state skip in dedicated_run_steady.cpp; the entry
// points that choose the processor model are in pipeline_simulator.cpp. Communication lanes are
// first-fit interval lists, so work issued "ahead" (prefetch, mid-op gradient buckets) takes the
// earliest free slot.
#pragma once

#include <algorithm>
#include <bit>
#include <climits>
#include <optional>
#include <unordered_map>

#include "plansight/estimator/cancellation.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/schedule_metrics.h"
#include "iteration_engine.h"
#include "steady_state.h"

namespace plansight::estimator {

// Dedicated processors: an op's time never depends on the other ranks, so a worklist runs each
// rank as far as its inputs allow; a rank is looked at again only when a neighbour delivers
// something it waits for. Work is O(ops + spans).
class DedicatedRun : IterationEngine {
 public:
  // `turn_chunk`: the table is DualPipe's lower half as a V (run_simulation), turning after that
  // chunk; -1: the table itself. `rows`: as IterationEngine's.
  DedicatedRun(const ScheduleTable& t, const ScheduleRows* rows, const SimulationInput& in, NsCosts costs,
               bool generated, SteadyPeriods* periods, std::int32_t turn_chunk = -1)
      : IterationEngine(t, rows, in, std::move(costs), in.keep_timeline), generated_(generated), periods_(periods) {
    turn_chunk_ = turn_chunk;
    const auto p = static_cast<std::size_t>(t.p);
    work_.resize(std::bit_ceil(p));
    work_mask_ = work_.size() - 1;
    limit_.resize(p);
    for (std::size_t r = 0; r < p; ++r) limit_[r] = rows_->size(r);
    readable_.assign(rows_->sparse() ? p : 0, {0, 0});
    shape_path_ = !keep_ && std::none_of(costs_.distinct.begin(), costs_.distinct.end(), [](const NsChunkCost& c) { return c.param_gather > 0; });
    pairs_ = !generated_ || t.v_shape();
    if (shape_path_) build_lean_chunks();
    queue_all();
  }

  Result<SimulationResult> run() {
    if (!keep_ && !skip_steady_state()) return make_error("estimate", kCancelledMessage);
    if (!drain()) return make_error("estimate", kCancelledMessage);
    if (auto stuck = deadlock_message(t_.p, *rows_, next_); !stuck.empty()) return make_error("schedule", stuck);
    const std::int64_t step_ns = seconds_to_ns(in_.optimizer_seconds);
    for (std::int32_t r = 0; r < t_.p; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      const std::int64_t start = step_may_start(r);
      step_ran(r, start, start + step_ns);
      if (rows_->size(ri) > 0) activity_[ri].occupied_end_ns = free_[ri];
    }
    if (turn_chunk_ >= 0) return mirrored_results();
    return results(schedule_bubbles_in_place(activity_));
  }

 private:
  // DualPipe's figures from its lower half's (this run): rank p-1-r's are rank r's.
  SimulationResult mirrored_results() {
    const SimulationResult half = results(ScheduleBubbles{});  // the bubbles: of all ranks, below
    const auto h = static_cast<std::size_t>(t_.p), p = 2 * h;
    std::vector<RankActivity> all(p);
    SimulationResult res;
    res.iteration_ns = half.iteration_ns;
    res.first_rank_exposed_send_ns = half.first_rank_exposed_send_ns;  // rank 0 is the lower half's
    for (std::size_t r = 0; r < h; ++r) {
      all[p - 1 - r] = activity_[r];
      all[p - 1 - r].rank = static_cast<std::int32_t>(p - 1 - r);
      all[r] = std::move(activity_[r]);
    }
    for (std::size_t r = 0; r < p; ++r) {
      const std::size_t of = r < h ? r : p - 1 - r;
      res.busy_ns.push_back(half.busy_ns[of]);
      res.compute_end_ns.push_back(half.compute_end_ns[of]);
      res.reduce_wait_ns.push_back(half.reduce_wait_ns[of]);
    }
    set_bubbles(res, schedule_bubbles(std::move(all)), static_cast<std::int32_t>(p));
    // Each op skipped stands for its mirror too; the mirror's ops are not simulated.
    res.skipped_ops = 2 * half.skipped_ops;
    res.simulated_ops = half.simulated_ops;
    return res;
  }

  void queue_all() {
    const auto p = static_cast<std::size_t>(t_.p);
    queued_.assign(p, 1);
    for (std::size_t r = 0; r < p; ++r) work_[r] = static_cast<std::int32_t>(r);
    work_head_ = 0;
    work_tail_ = p;
  }

  // Steps queued ranks until none can go on (each up to its limit); false when cancelled.
  bool drain() {
    if (!readable_.empty()) ensure_readable();
    if (record_exact_) {
      if (record_margins_) return pairs_ ? drain_ops<true, true, true>() : drain_ops<false, true, true>();
      return pairs_ ? drain_ops<true, false, true>() : drain_ops<false, false, true>();
    }
    if (record_margins_) return pairs_ ? drain_ops<true, true>() : drain_ops<false, true>();
    return pairs_ ? drain_ops<true, false>() : drain_ops<false, false>();
  }
  // `Pairs`: the table may hold overlapped pairs (ScheduleOp::pairs_with_next); make_schedule's
  // have them only for DualPipe(V), and the other schedules' op loop leaves out their check.
  // `Margins`: the decisions between ranks are recorded (record_margins_). `Exact`: every
  // comparison of every op is recorded (record_exact_).
  template <bool Pairs, bool Margins, bool Exact = false>
  bool drain_ops() {
    while (work_head_ != work_tail_) {
      const std::int32_t r = work_[work_head_++ & work_mask_];
      queued_[static_cast<std::size_t>(r)] = 0;
      if (--poll_calls_ == 0) [[unlikely]] {
        poll_calls_ = kPollCalls;
        if (cancel_requested()) return false;
      }
      if (!advance<Pairs, Margins, Exact>(r)) return false;
    }
    return true;
  }
  // The cancellation poll of the op loop: every this many turns of a rank (1,000 to 4,000 ops,
  // under 0.05 ms), so a cancelled estimate stops within a frame. Counted per op and polled where
  // due, it was a sixth of run_lean's work a call (its loop bound, its count and its check).
  static constexpr std::uint32_t kPollCalls = 1024;
  std::uint32_t poll_calls_ = kPollCalls;

  // Runs rank r's ops until one waits for an input (or the rank's limit); false when cancelled.
  template <bool Pairs, bool Margins, bool Exact>
  [[gnu::always_inline]] bool advance(std::int32_t r) {
    for (;;) {
      if (shape_path_) {
        if (run_lean<Pairs, Margins, Exact>(r) == Lean::blocked) return true;
      }
      if (!step(r)) return true;
      if constexpr (Exact) exact_lean_only_ = false;  // step()'s comparisons are not recorded
      if (poll_cancelled()) return false;
    }
  }
  // Every 4096 operations that step() runs (about 0.1 ms): a cancelled estimate stops within a frame.
  bool poll_cancelled() { return (++polls_ & 4095u) == 0 && cancel_requested(); }

  // The common op, run with the rank's state in registers: what step() does for an op that runs
  // by its shape (see there) and is none of the rank's one-off ops (its first and last, those
  // before its first compute, a chunk's last backward issuing the gradient reduction), with
  // sends on the lane and no names or spans (shape_path_). Stops at the first op it does not
  // run: `blocked` when that op's inputs are not there or the rank is at its limit, `other`
  // when step() must run it.
  enum class Lean { blocked, other };
  template <bool Pairs, bool Margins, bool Exact>
  [[gnu::always_inline]] Lean run_lean(std::int32_t r) {
    const auto ri = static_cast<std::size_t>(r);
    RankActivity& a = activity_[ri];
    std::size_t i = next_[ri];
    const std::size_t rank_limit = limit_[ri];
    if (i == 0 || a.compute_begin_ns > a.compute_end_ns) return i < rank_limit ? Lean::other : Lean::blocked;
    const LeanRank& lr = lean_rank_[ri];
    const ScheduleOp* const ops = lr.ops;
    const std::size_t limit = std::min(rank_limit, lr.last);
    const LeanOp* const kinds = lr.kinds;
    CommLane& lane = *lr.lane;
    // Nothing this rank books from now on is issued before its last op's start (step()).
    lane.forget_before(prev_start_[ri]);
    // What the loop reads and writes, in locals: its stores (times, lane intervals, gaps) could
    // otherwise alias the members, which the compiler then reloads for every op.
    const std::int64_t collectives_end = collective_end_[ri];
    const bool first_rank = ri == 0;  // its idle stretches and sends are listed too (first_idle_)
    std::int64_t clear_gap = a.clear_gap_ns;
    std::int64_t free = free_[ri], prev_start = prev_start_[ri], busy = busy_[ri];
    std::int64_t lane_end = lane.end();
    // Exact: this rank's comparisons of the period, kExactSlots an op, from its first op of it.
    [[maybe_unused]] std::int64_t* exact = nullptr;
    [[maybe_unused]] std::size_t exact_from = 0, exact_ops = 0;
    if constexpr (Exact) {
      exact = exact_now_.data() + exact_at_[ri];
      exact_from = exact_first_[ri];
      exact_ops = (exact_at_[ri + 1] - exact_at_[ri]) / kExactSlots;
    }
    Lean out = Lean::other;
    for (; i < limit; ++i) {
      const ScheduleOp o = ops[i];
      const LeanOp& d = kinds[static_cast<std::size_t>(o.chunk) * 3 + static_cast<std::size_t>(o.kind)];
      const auto mb = static_cast<std::size_t>(o.micro_batch);
      std::int64_t ready = d.in[mb];
      [[maybe_unused]] std::int64_t* margin = Margins ? d.margin : nullptr;
      [[maybe_unused]] std::int64_t pair_margin = kNoComparison;
      if (Pairs && o.pairs_with_next && ready >= 0) {
        // An overlapped pair (input_ready_at): it waits for the next op's input too (op i + 1
        // exists: the loop stops before the rank's last op, which pairs with none).
        const ScheduleOp second = ops[i + 1];
        const LeanOp& d2 = kinds[static_cast<std::size_t>(second.chunk) * 3 + static_cast<std::size_t>(second.kind)];
        const std::int64_t other = d2.in[static_cast<std::size_t>(second.micro_batch)];
        if constexpr (Exact) pair_margin = other >= 0 ? ready - other : kNoComparison;
        if constexpr (Margins) {
          if (other >= 0) {
            if (d.from >= 0 && d2.from >= 0) note_margin(d.from, d2.from, ready - other, true);
            if (other > ready) margin = d2.margin;
          }
        }
        ready = other < 0 ? kUnknown : std::max(ready, other);
      }
      if (ready < 0) {
        out = Lean::blocked;
        break;
      }
      // Recorded before the checks that hand the op to step(), which records it again: the same
      // decision twice bounds a skip alike, and keeping these records out of the loop's exits
      // measured 2.5 % slower on DualPipeV. (note_margin()'s, kept as its record's least.)
      if constexpr (Margins) {
        const std::int64_t m = free - ready;
        const std::int64_t at_least_0 = m & ~(m >> 63);  // max(m, 0) without a branch
        if (at_least_0 < *margin) *margin = at_least_0;  // rarely: a rank pair's least comes early
      }
      if (d.reduce_at == static_cast<std::int64_t>(i)) break;  // step() issues the reduction
      const std::int64_t start = std::max(free, ready);
      if (lane_end > start + d.first_lane) break;  // a collective may wait: step() books it
      if (start > free) {
        if (first_rank) first_idle_.push_back({free, start});
        if (free >= collectives_end) {
          clear_gap += start - free;
        } else {
          a.gaps.push_back({free, start});
        }
      }
      const std::int64_t end = start + d.ns;
      if constexpr (Exact) {
        // Every comparison whose side decides this op's times (steady_state.h's drift): its
        // input against its rank's clock (and a pair's two inputs), its first collective against
        // the lane, a wait's start against the rank's collectives, its send against the lane.
        const std::size_t j = i - exact_from;
        if (i < exact_from || j >= exact_ops) [[unlikely]] {
          exact_lean_only_ = false;
        } else {
          std::int64_t* x = exact + j * kExactSlots;
          x[0] = free - ready;
          x[1] = pair_margin;
          x[2] = d.first_lane == NsRunShape::kNone ? kNoComparison : start + d.first_lane - lane_end;
          x[3] = start > free ? free - collectives_end : kNoComparison;
          x[4] = d.out != nullptr && d.send > 0 ? end - lane_end : kNoComparison;
          // A send issued before the lane's end goes into a gap (CommLane::place_in_gap), by
          // comparisons not recorded here.
          if (x[4] != kNoComparison && x[4] < 0) exact_lean_only_ = false;
        }
      }
      busy += d.compute_ns;  // the compute window's end is the last op's (step())
      ++*d.ran;
      prev_start = start;
      free = end;
      if (d.b_done != nullptr) d.b_done[mb] = end;
      if (d.out != nullptr) {
        d.out[mb] = deliver(lane, lane_end, end, d.send);
        if (first_rank && d.send > 0) first_sends_.push_back({d.out[mb] - d.send, d.out[mb]});
        if (d.to >= 0) wake(d.to);
      }
    }
    if (i >= rank_limit && out == Lean::other) out = Lean::blocked;
    next_[ri] = i;
    free_[ri] = free;
    prev_start_[ri] = prev_start;
    busy_[ri] = busy;
    a.clear_gap_ns = clear_gap;
    return out;
  }
  // When an output of an op that ended at `end` reaches its consumer: at once (`ns` 0: on the
  // same rank, or no send), else after its send of `ns` on this rank's lane (communicate() for a
  // send without spans). place() books it at the lane's end or in a gap before, so the lane then
  // ends at the later of `lane_end` and the arrival.
  [[gnu::always_inline]] static std::int64_t deliver(CommLane& lane, std::int64_t& lane_end, std::int64_t end, std::int64_t ns) {
    if (ns <= 0) return end;
    const std::int64_t arrival = lane.place(end, ns) + ns;
    lane_end = std::max(lane_end, arrival);
    return arrival;
  }
  // What run_lean() needs of one kind of op of one of a rank's chunks, gathered once per run, by
  // (rank, local chunk, kind), (r * v + c) * 3 + kind: the rows of times_ it reads and writes,
  // its shape, its send and the rank it wakes, side by side in 80 bytes (a chunk's record with
  // every kind's fields was 120, two cache lines, and the op's shape one pointer further). The
  // pointers hold for the whole run: times_ and ran_ are sized by the constructor and never
  // reallocated after it.
  struct LeanOp {
    std::int64_t* in = nullptr;      // the row of the plane it reads (op_input_ready), by micro-batch
    // The row its end goes to: the forward inputs of the chunk a forward feeds, or its own
    // backward's row (a last chunk's loss, op_finished); the gradients of the chunk a backward
    // feeds. Null: none (a first chunk's backward, a W).
    std::int64_t* out = nullptr;
    std::int64_t* b_done = nullptr;  // a backward's: the row its ends go to for the Ws; null: no W reads them
    std::int32_t* ran = nullptr;     // its ops run (ran_)
    std::int64_t ns = 0, compute_ns = 0, first_lane = NsRunShape::kNone;  // its shape (NsRunShape)
    std::int64_t send = 0;           // its output's send on the lane (0: none, or to a chunk of the same rank)
    std::int64_t reduce_at = -1;     // the op that issues its chunk's gradient reduction (step() runs it)
    std::int32_t to = -1;            // the rank its output wakes (-1: none, or its own)
    std::int32_t from = -1;          // input_rank() (-1: none, or its own rank): for the decisions
    // Its ops' decisions between ranks (note_margin()'s, not of a pair): lean_margin_'s element
    // of this record, or its last (read by none) when its input is from no other rank.
    std::int64_t* margin = nullptr;
  };
  // What run_lean() reads of a rank before its first op, in one record: through the rows and
  // the arrays, its row, last op, records and lane were a chain of dependent loads at the start
  // of each call (a call runs 1 to 4 ops: 41,719 calls for 163,840 ops in a 64 x 4 x 1024
  // interleaved run with ZeRO-3). Fixed for the run: the rows' pointers and sizes, lean_ and
  // lanes_ are never moved after build_lean_chunks().
  struct LeanRank {
    const ScheduleOp* ops = nullptr;  // rows_->data(r)
    std::size_t last = 0;             // rows_->size(r) - 1: the rank's last op, which step() runs
    const LeanOp* kinds = nullptr;    // its records, by (local chunk, kind)
    CommLane* lane = nullptr;
  };
  std::vector<LeanRank> lean_rank_;
  void build_lean_chunks() {
    const auto p = static_cast<std::size_t>(t_.p), v = static_cast<std::size_t>(t_.v);
    lean_.assign(p * v * 3, LeanOp{});
    lean_rank_.resize(p);
    for (std::size_t r = 0; r < p; ++r) {
      lean_rank_[r] = LeanRank{rows_->data(r), rows_->size(r) - 1, &lean_[r * v * 3], &lanes_[r]};
    }
    lean_margin_.assign(lean_.size() + 1, kNoMargin);
    const std::size_t planes = times_.size() / plane_;
    for (std::size_t k = 0; k < p * v; ++k) {
      const std::int32_t g = global_of_[k];
      const NsChunkCost& c = cost(g);
      const auto r = static_cast<std::int32_t>(k / v);
      const bool has_next = g + 1 < stages_ && g + 1 != second_start_;
      const bool has_prev = g > 0 && g != second_start_;
      const std::int32_t next_rank = has_next ? rank_of_[static_cast<std::size_t>(g) + 1] : -1;
      const std::int32_t prev_rank = has_prev ? rank_of_[static_cast<std::size_t>(g) - 1] : -1;
      for (std::size_t kind = 0; kind < 3; ++kind) {
        LeanOp& d = lean_[3 * k + kind];
        if (kind < planes) d.in = plane(kind) + pair(g, 0);
        d.ran = &ran_[static_cast<std::size_t>(g) * 3 + kind];
        const NsRunShape& shape = c.shapes[shape_index_[kind]];
        d.ns = shape.ns;
        d.compute_ns = shape.compute_ns;
        d.first_lane = shape.first_lane;
        if (in_.dp_issue == DpReduceIssue::per_chunk) d.reduce_at = last_bwd_[k];
      }
      LeanOp& f = lean_[3 * k + static_cast<std::size_t>(OpKind::forward)];
      LeanOp& b = lean_[3 * k + static_cast<std::size_t>(OpKind::backward)];
      if (has_next) {
        // (A send is paid across DualPipe's turn, turn_chunk_, though both chunks are this rank's.)
        f.out = plane(kFwdReady) + pair(g + 1, 0);
        f.send = next_rank == r && g != turn_chunk_ ? 0 : c.send_activation;
        f.to = next_rank != r ? next_rank : -1;
        b.from = next_rank;
      } else {
        f.out = plane(kBwdReady) + pair(g, 0);  // the loss: the last chunk's backward needs only its own forward
      }
      if (has_prev) {
        b.out = plane(kBwdReady) + pair(g - 1, 0);
        b.send = prev_rank == r && g - 1 != turn_chunk_ ? 0 : c.send_gradient;
        b.to = prev_rank != r ? prev_rank : -1;
        f.from = prev_rank;
      }
      if (t_.split_backward) b.b_done = plane(kBDone) + pair(g, 0);
      for (std::size_t kind = 0; kind < 3; ++kind) {
        LeanOp& d = lean_[3 * k + kind];
        d.margin = &lean_margin_[d.from >= 0 && d.from != r ? 3 * k + kind : lean_.size()];
      }
    }
  }
  // The decisions of the lean path's ops since the last cut, one per LeanOp instead of one per
  // op: what margin_cycles() needs of a rank pair's decisions (that are not of a pair of ops)
  // is their least margin, max(free - ready, 0) (0: a tie, or an op that waited for its input,
  // either of which ends a skip between ranks that move apart). A record an op was 24 bytes an
  // op: 780 kB a period of a 64-stage interleaved run, more than a core's L2 (that estimate with
  // ZeRO-3: 3 % fewer instructions this way, and 1.98 -> 1.77 ms; time-core-cpu.txt).
  static constexpr std::int64_t kNoMargin = INT64_MAX;
  std::vector<std::int64_t> lean_margin_;
  // The comparisons of the lean path's ops, recorded per op while record_exact_ (run_lean): what
  // the drift search (skip_region) reads of two periods in a row. An op's slots: its rank's clock
  // less its input's arrival, a pair's first input less its second's, its first collective's
  // start less the lane's end, a wait's start less the rank's collectives' end, its end less the
  // lane's end where it sends; kNoComparison where the op makes no such comparison.
  static constexpr std::size_t kExactSlots = 5;
  bool record_exact_ = false;
  bool exact_lean_only_ = true;  // every op of the period ran on the lean path, inside its rank's room
  std::vector<std::int64_t> exact_now_, exact_before_;  // this period's, the one before's
  std::vector<std::size_t> exact_at_;     // per rank + 1: its first slot (kExactSlots x its period's ops)
  std::vector<std::size_t> exact_first_;  // per rank: its first op of this period
  // Starts recording a period at the run's current cut (every rank's next op), the last
  // period's record kept as exact_before_.
  void start_exact_period(const std::vector<std::size_t>& period_ops) {
    const std::size_t p = period_ops.size();
    if (exact_at_.size() != p + 1) {
      exact_at_.assign(p + 1, 0);
      for (std::size_t r = 0; r < p; ++r) exact_at_[r + 1] = exact_at_[r] + kExactSlots * period_ops[r];
    }
    exact_now_.swap(exact_before_);
    exact_now_.resize(exact_at_[p]);  // every slot written by its op (the cuts are checked whole)
    exact_first_ = next_;
    exact_lean_only_ = true;
  }
  // comparison_cycles() of the last two periods' records.
  std::int64_t exact_cycles() const { return comparison_cycles(exact_before_.data(), exact_now_.data(), exact_now_.size()); }

  // At a cut: the decisions of the ops run since the last are dropped (those of the lean path
  // were recorded only if record_margins_ was set while they ran).
  void clear_margins() {
    margins_.clear();
    if (record_margins_) std::fill(lean_margin_.begin(), lean_margin_.end(), kNoMargin);
  }
  // margin_cycles() over every decision, the lean path's included.
  std::int64_t all_margin_cycles(const std::vector<std::int64_t>& ns) const {
    std::int64_t cycles = margin_cycles(ns);
    const std::size_t per_rank = 3 * static_cast<std::size_t>(t_.v);
    for (std::size_t k = 0; k < lean_.size() && cycles > 0; ++k) {
      const std::int64_t m = lean_margin_[k];
      if (m == kNoMargin) continue;
      const std::int64_t slope = ns[k / per_rank] - ns[static_cast<std::size_t>(lean_[k].from)];
      if (slope == 0) continue;
      if (m == 0) return 0;
      // A positive margin shrinks while its rank moves on by the longer period (margin_cycles()).
      if (slope < 0) cycles = std::min(cycles, m / -slope);
    }
    return cycles;
  }

  // The steady state (steady_state.h): runs every rank into its periods, then a period more at a
  // time (later several), comparing the state after each with those before; once the state
  // repeats up to a shift (as a whole, or rank by rank), skips the periods that can only repeat
  // it. Leaves every rank free to run to its end. False when cancelled. (dedicated_run_steady.cpp)
  bool skip_steady_state();
  // GPipe (one chunk a rank): whether the stage that starts the flow of `kind` ops (the first for
  // forwards, the last for backwards) takes at least as long per op as every other.
  bool feeder_is_slowest(OpKind kind) const;
  // The steady-state skip over the ops [first[r], end[r]) of every rank (steady_state.h's
  // arguments); false when cancelled. Leaves each rank where its last cut, or the skip, put it.
  bool skip_region(const std::vector<std::size_t>& first, const std::vector<std::size_t>& end,
                   std::size_t ops_per_micro_batch);

  bool finish_skipping() {
    for (std::size_t r = 0; r < limit_.size(); ++r) limit_[r] = rows_->size(r);
    queue_all();
    return true;
  }

  // Where a skip of rank r may end at the latest: every op before copies_end + P_r is the op P_r
  // before it moved on by a period (ops[i + P_r] repeats ops[i] for i in [begin, copies_end)), so
  // each skipped op repeats one of the periods compared. Ending at copies_end instead left up to a
  // period more to simulate one op at a time (interleaved 64 x 4 x 1024: 512 ops of every rank).
  static std::size_t repeats_until(const SteadyPeriod& period, std::size_t r) {
    return period.copies_end[r] + period.ops[r];
  }

  // Skips from `now` when it is `before` repeated `cycle` periods on: both cuts inside the
  // periods, every rank's `cycle` periods apart (so the ops between them repeat those before
  // them, as do those of the cycles skipped after `now`), and the state shifted alike. Skips as
  // many cycles as every rank's periods allow. With `margins` (margins_ holds the decisions of
  // the ops between the two cuts), ranks may move on by periods of their own: then the skip ends
  // where a decision between two of them may change side. `own_only`: states whose ranks' clocks
  // all move alike are left to the uniform search (shape_hash), which finds them for less.
  struct Skipped {
    std::int64_t cycles = 0;   // skipped
    bool all = false;          // to the end of the periods
    bool own_periods = false;  // the state repeats with a shift per rank, not all equal
  };
  Skipped skip_from(const SteadyPeriod& period, SteadySnapshot& before, SteadySnapshot& now, std::int64_t cycle,
                    bool own_only, bool margins = false);
  // Skips from s2 when s0 -> s1 -> s2, three cuts a period apart whose periods' comparisons were
  // recorded (record_exact_), drift alike (drift_shifts): as many periods as every comparison
  // keeps its side (exact_cycles) and every rank's periods allow.
  Skipped skip_drift_from(const SteadyPeriod& period, SteadySnapshot& s0, SteadySnapshot& s1, SteadySnapshot& s2,
                          Drift& shifts);

  void wake(std::int32_t r) {
    auto& q = queued_[static_cast<std::size_t>(r)];
    if (!q) {
      q = 1;
      work_[work_tail_++ & work_mask_] = r;
    }
  }

  // Runs rank r's next op if its inputs are known; false when blocked or finished.
  bool step(std::int32_t r) {
    const auto ri = static_cast<std::size_t>(r);
    const ScheduleOp* const ops = rows_->data(ri);
    const std::size_t size = rows_->size(ri);
    if (next_[ri] >= limit_[ri]) return false;
    const ScheduleOp& o = ops[next_[ri]];
    const std::int32_t g = global_of(r, o.chunk);
    const std::int64_t ready = input_ready(r, o, g);
    if (ready < 0) return false;
    if (record_margins_) note_margins(r, next_[ri], o, g, free_[ri]);
    // Nothing this rank books from now on is issued before its last op's start (the earliest
    // issue: a prefetched gather; the snapshot reads its lane from there too).
    lanes_[ri].forget_before(prev_start_[ri]);
    const std::int64_t start = gather_before(r, o, g, std::max(free_[ri], ready));
    RankActivity& a = activity_[ri];
    if (next_[ri] == 0) {
      a.occupied_begin_ns = start;
      a.occupied_end_ns = -1;  // until the op ends: lane_wait() knows the rank's first work
    } else if (start > free_[ri]) {
      gap(ri, free_[ri], start);
    }
    const bool record = a.compute_begin_ns > a.compute_end_ns || next_[ri] + 1 == size;
    const NsChunkCost& c = cost(g);
    const std::size_t first_span = keep_ ? compute_track(r).spans.size() : 0;
    std::int64_t end = start;
    const NsRunShape& shape = c.shapes[shape_index(o.kind)];
    if (shape_path_ && lanes_[ri].end() <= start + shape.first_lane && !reduces_here(ri, o)) [[likely]] {
      // No collective of the op can wait for the lane: it ends at start + ns. Its lane
      // segments are not booked: nothing issued later can start before its end (no ZeRO-3
      // gather is issued ahead, no gradient bucket inside this op: shape_path_, reduces_here).
      end = start + shape.ns;
      busy_[ri] += shape.compute_ns;
      if (record && shape.compute_first >= 0) {
        if (a.compute_begin_ns > a.compute_end_ns) a.compute_begin_ns = start + shape.compute_first;
        a.compute_end_ns = start + shape.compute_end;
      }
    } else {
      if (o.kind == OpKind::backward && !c.recompute.empty()) {
        end = segments(record, r, end, c.recompute, op_name(o, g, true), g, o.micro_batch);
      }
      end = segments(record, r, end, op_segments(o, c), op_name(o, g), g, o.micro_batch);
    }
    if (keep_) draw_overlapped(r, o, g, first_span);
    if (next_[ri] == 0) a.occupied_end_ns = end;
    if (const std::int32_t to = op_finished(r, o, g, start, end); to >= 0) wake(to);
    return true;
  }

  // Whether rank r's next op `o` issues its chunk's gradient reduction inside itself (buckets
  // issued during the op may take the gaps between its collectives on the lane).
  bool reduces_here(std::size_t r, const ScheduleOp& o) const {
    return in_.dp_issue == DpReduceIssue::per_chunk &&
           last_bwd_[r * static_cast<std::size_t>(t_.v) + static_cast<std::size_t>(o.chunk)] ==
               static_cast<std::int64_t>(next_[r]);
  }

  // Runs segments back to back from `t`; returns the end. What the bubble needs
  // (schedule_metrics.h's RankActivity) costs this loop, most of a simulation's time, nothing:
  // the rare wait of a collective for a busy lane is recorded out of line, and the first and
  // last compute (the window) only for the ops that can hold them (Record: the rank's ops until
  // its first compute, and its last op).
  template <bool Record>
  std::int64_t run_segments(std::int32_t r, std::int64_t t, const std::vector<NsSegment>& segs,
                            std::int32_t name, std::int32_t g, std::int32_t mb) {
    [[maybe_unused]] std::int64_t compute_first = -1, compute_end = -1;
    for (const NsSegment& s : segs) {
      if (s.ns == 0) continue;
      if (s.lane == Lane::compute) {
        if (keep_) compute_track(r).spans.push_back(span(t, s.ns, s, name, g, mb));
        busy_[static_cast<std::size_t>(r)] += s.ns;
        if constexpr (Record) compute_first = compute_first < 0 ? t : compute_first;
        t += s.ns;
        if constexpr (Record) compute_end = t;
      } else {
        const std::int64_t start = lanes_[static_cast<std::size_t>(r)].place(t, s.ns);
        if (keep_) comm_track(r).spans.push_back(span(start, s.ns, s, segment_name(s, name), g, mb));
        if (start > t) [[unlikely]] lane_wait(r, t, start);
        t = start + s.ns;
      }
    }
    if constexpr (Record) {
      if (compute_end >= 0) {
        RankActivity& a = activity_[static_cast<std::size_t>(r)];
        if (a.compute_begin_ns > a.compute_end_ns) a.compute_begin_ns = compute_first;
        a.compute_end_ns = compute_end;
      }
    }
    return t;
  }

  std::int64_t segments(bool record, std::int32_t r, std::int64_t t, const std::vector<NsSegment>& segs,
                        std::int32_t name, std::int32_t g, std::int32_t mb) {
    return record ? run_segments<true>(r, t, segs, name, g, mb) : run_segments<false>(r, t, segs, name, g, mb);
  }

  // Idle time of rank r over [begin, end) between its ops. Collectives placed later never start
  // before `end` (they are issued at or after the op that follows), so a gap that begins after
  // every collective placed so far has ended is clear of them all: a sum, not a list.
  void gap(std::size_t r, std::int64_t begin, std::int64_t end) {
    if (r == 0) first_idle_.push_back({begin, end});
    if (begin >= collective_end_[r]) {
      activity_[r].clear_gap_ns += end - begin;
    } else {
      activity_[r].gaps.push_back({begin, end});
    }
  }

  // A collective of an op waits for the busy lane over [t, start): a gap in the rank's work, or,
  // before its first piece of work, the later start of that work.
  [[gnu::noinline]] void lane_wait(std::int32_t r, std::int64_t t, std::int64_t start) {
    RankActivity& a = activity_[static_cast<std::size_t>(r)];
    if (a.occupied_end_ns < 0 && a.occupied_begin_ns == t) {
      a.occupied_begin_ns = start;
    } else {
      a.gaps.push_back({t, start});  // a list, not the sum: it may lie outside the window
      if (r == 0) first_idle_.push_back({t, start});
    }
  }

  // A search runs where every rank's ops repeat long enough to compare a period and skip one
  // (skip_region): periods of one micro-batch start at the run's first cut, so 3 periods
  // (copies_end - begin >= 2 P_r) that also hold two cycles of p micro-batches (1F1B's longest);
  // periods of a micro-batch group (Megatron's interleaved order) start half a period in, so 2.5
  // (copies_end - begin >= 1.5 P_r). Asking for more (6 periods and 2p + 16 micro-batches) left
  // interleaved runs of 4 to 8 groups simulated op by op: 64 x 4 x 512 took 3.5 ms an estimate
  // instead of 1.6.
  static constexpr std::size_t kSkipMinPeriods = 2;
  static constexpr std::int64_t kOwnStalls = 2;  // skip_region
  static constexpr std::int64_t kDriftStalls = 3;  // skip_region
  static constexpr std::size_t kSkipMaxCycle = 256;  // periods; longer cycles are simulated
  static constexpr std::int64_t kSparsePeriods = 8;
  // Cuts while snapshots are kept (skip_region), chosen over 256-4096 ops and 2-32 dense periods
  // on bench_estimate.cpp's plans (bench/results/time-core-cpu.txt, 2026-11-27): ZB-H1 and
  // DualPipe(V) at 64 x 1024 within 1 % of their best, the default plan unchanged (2 dense
  // periods cost it 13 %, which saves 64-stage 1F1B 10 %).
  static constexpr std::size_t kMinOpsPerCut = 2048;
  static constexpr std::int64_t kDensePeriods = 4;
  // A sparse table's ops (ScheduleRows::sparse) each rank may read: those from next_ to its limit
  // (and the op after it, which an overlapped pair reads). Asked for ahead (kReadAhead), so that
  // a run that cuts every period (a few ops) takes the rows' lock every few hundred periods.
  // The pair times of the micro-batches those ops run are set up with them (ensure_times).
  void ensure_readable() {
    bool moved = false;
    for (std::size_t r = 0; r < readable_.size(); ++r) {
      const std::size_t from = next_[r], to = std::min(limit_[r] + 1, rows_->size(r));
      auto& [begin, end] = readable_[r];
      if (from >= begin && to <= end) continue;
      begin = from;
      end = std::min(std::max(to, from + kReadAhead), rows_->size(r));
      rows_->ensure(r, begin, end);
      moved = true;
    }
    if (!moved) return;
    std::int32_t mb_begin = m_, mb_end = 0;
    for (std::size_t r = 0; r < readable_.size(); ++r) {
      mb_begin = std::min(mb_begin, rows_->micro_batch_begin(r, readable_[r].first));
      mb_end = std::max(mb_end, rows_->micro_batch_end(r, readable_[r].second));
    }
    ensure_times(mb_begin, mb_end);
  }
  static constexpr std::size_t kReadAhead = 256;
  std::vector<std::pair<std::size_t, std::size_t>> readable_;  // per rank [begin, end); sparse tables only
  bool generated_;                  // the table is make_schedule()'s (run_simulation)
  SteadyPeriods* periods_;          // shared with other runs of the table, or null
  // Ops may run by their shape (NsRunShape) when nothing needs their lane segments booked: no
  // timeline is kept, and no ZeRO-3 gather is issued ahead into the lane's gaps.
  bool shape_path_ = false;
  bool pairs_ = true;  // the table may hold overlapped pairs (drain)
  std::vector<std::size_t> limit_;  // per rank: ops it may run for now (all but while skipping)
  std::vector<LeanOp> lean_;  // per (rank, local chunk, kind), (r * v + c) * 3 + kind (shape_path_ only)
  std::uint32_t polls_ = 0;
  std::vector<char> queued_;        // rank is in work_
  // The ranks to step, a ring: [work_head_, work_tail_) masked by work_mask_ (a power of two less
  // one, at least p - 1: each rank is queued at most once).
  std::vector<std::int32_t> work_;
  std::size_t work_head_ = 0, work_tail_ = 0, work_mask_ = 0;
};

}  // namespace plansight::estimator
