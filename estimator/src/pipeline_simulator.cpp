// The iteration simulator with dedicated processors, and the entry points that choose the
// processor model (iteration_engine.h). Communication lanes are first-fit interval lists, so
// work issued "ahead" (prefetch, mid-op gradient buckets) takes the earliest free slot.
#include "plansight/estimator/pipeline_simulator.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <unordered_map>

#include "plansight/estimator/cancellation.h"
#include "plansight/estimator/schedule_metrics.h"
#include "iteration_engine.h"
#include "shared_processor_simulator.h"
#include "steady_state.h"

namespace plansight::estimator {

namespace {

// The steady state's search runs only where it can pay: the transient and two cycles, each up
// to about p micro-batches (1F1B's critical circuit runs through every stage and back), must
// leave periods to skip. Below that the search would cost more than it saves.
constexpr std::int32_t kSkipMinMicroBatches = 32;
bool skippable(const ScheduleTable& t) { return t.m >= kSkipMinMicroBatches + 3 * t.p; }

// Dedicated processors: an op's time never depends on the other ranks, so a worklist runs each
// rank as far as its inputs allow; a rank is looked at again only when a neighbour delivers
// something it waits for. Work is O(ops + spans).
class DedicatedRun : IterationEngine {
 public:
  // `turn_chunk`: the table is DualPipe's lower half as a V (run_simulation), turning after that
  // chunk; -1: the table itself.
  DedicatedRun(const ScheduleTable& t, const SimulationInput& in, std::vector<NsChunkCost> costs, bool generated,
               SteadyPeriods* periods, std::int32_t turn_chunk = -1)
      : IterationEngine(t, in, std::move(costs), in.keep_timeline), generated_(generated), periods_(periods) {
    turn_chunk_ = turn_chunk;
    const auto p = static_cast<std::size_t>(t.p);
    work_.resize(p);  // a ring: each rank is queued at most once
    limit_.resize(p);
    for (std::size_t r = 0; r < p; ++r) limit_[r] = t.ranks[r].size();
    shape_path_ = !keep_ && std::none_of(costs_.begin(), costs_.end(), [](const NsChunkCost& c) { return c.param_gather > 0; });
    pairs_ = !generated_ || t.v_shape();
    if (shape_path_) build_lean_chunks();
    queue_all();
  }

  Result<SimulationResult> run() {
    if (!keep_ && !skip_steady_state()) return make_error("estimate", kCancelledMessage);
    if (!drain()) return make_error("estimate", kCancelledMessage);
    if (auto stuck = deadlock_message(t_, next_); !stuck.empty()) return make_error("schedule", stuck);
    const std::int64_t step_ns = seconds_to_ns(in_.optimizer_seconds);
    for (std::int32_t r = 0; r < t_.p; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      const std::int64_t start = step_may_start(r);
      step_ran(r, start, start + step_ns);
      if (!t_.ranks[ri].empty()) activity_[ri].occupied_end_ns = free_[ri];
    }
    if (turn_chunk_ >= 0) return mirrored_results();
    return results(schedule_bubbles(std::move(activity_)));
  }

 private:
  // DualPipe's figures from its lower half's (this run): rank p-1-r's are rank r's.
  SimulationResult mirrored_results() {
    const SimulationResult half = results(ScheduleBubbles{});  // the bubbles: of all ranks, below
    const auto h = static_cast<std::size_t>(t_.p), p = 2 * h;
    std::vector<RankActivity> all(p);
    SimulationResult res;
    res.iteration_ns = half.iteration_ns;
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
    work_count_ = p;
  }

  // Steps queued ranks until none can go on (each up to its limit); false when cancelled.
  bool drain() {
    if (record_margins_) return pairs_ ? drain_ops<true, true>() : drain_ops<false, true>();
    return pairs_ ? drain_ops<true, false>() : drain_ops<false, false>();
  }
  // `Pairs`: the table may hold overlapped pairs (ScheduleOp::pairs_with_next); make_schedule's
  // have them only for DualPipe(V), and the other schedules' op loop leaves out their check.
  // `Margins`: the decisions between ranks are recorded (record_margins_).
  template <bool Pairs, bool Margins>
  bool drain_ops() {
    while (work_count_ > 0) {
      const std::int32_t r = work_[work_head_];
      work_head_ = work_head_ + 1 == work_.size() ? 0 : work_head_ + 1;
      --work_count_;
      queued_[static_cast<std::size_t>(r)] = 0;
      if (!advance<Pairs, Margins>(r)) return false;
    }
    return true;
  }

  // Runs rank r's ops until one waits for an input (or the rank's limit); false when cancelled.
  template <bool Pairs, bool Margins>
  [[gnu::always_inline]] bool advance(std::int32_t r) {
    for (;;) {
      if (shape_path_) {
        const Lean ran = run_lean<Pairs, Margins>(r);
        if (ran == Lean::cancelled) return false;
        if (ran == Lean::blocked) return true;
      }
      if (!step(r)) return true;
      if (poll_cancelled()) return false;
    }
  }
  // Every 4096 operations (about 0.1 ms): a cancelled estimate stops within a frame.
  bool poll_cancelled() { return (++polls_ & 4095u) == 0 && cancel_requested(); }

  // The common op, run with the rank's state in registers: what step() does for an op that runs
  // by its shape (see there) and is none of the rank's one-off ops (its first and last, those
  // before its first compute, a chunk's last backward issuing the gradient reduction), with
  // sends on the lane and no names or spans (shape_path_). Stops at the first op it does not
  // run: `blocked` when that op's inputs are not there or the rank is at its limit, `other`
  // when step() must run it.
  enum class Lean { blocked, other, cancelled };
  template <bool Pairs, bool Margins>
  [[gnu::always_inline]] Lean run_lean(std::int32_t r) {
    const auto ri = static_cast<std::size_t>(r);
    RankActivity& a = activity_[ri];
    std::size_t i = next_[ri];
    const std::size_t rank_limit = limit_[ri];
    if (i == 0 || a.compute_begin_ns > a.compute_end_ns) return i < rank_limit ? Lean::other : Lean::blocked;
    const ScheduleOp* const ops = t_.ranks[ri].data();
    const std::size_t limit = std::min(rank_limit, t_.ranks[ri].size() - 1);
    const LeanChunk* const chunks = &lean_[ri * static_cast<std::size_t>(t_.v)];
    CommLane& lane = lanes_[ri];
    // Nothing this rank books from now on is issued before its last op's start (step()).
    lane.forget_before(prev_start_[ri]);
    // What the loop reads and writes, in locals: its stores (times, lane intervals, gaps) could
    // otherwise alias the members, which the compiler then reloads for every op.
    const std::int64_t collectives_end = collective_end_[ri];
    std::int64_t clear_gap = a.clear_gap_ns;
    std::int64_t free = free_[ri], prev_start = prev_start_[ri], busy = busy_[ri];
    std::int64_t lane_end = lane.end();
    std::uint32_t polls = polls_;
    Lean out = Lean::other;
    for (; i < limit; ++i) {
      const ScheduleOp o = ops[i];
      const LeanChunk& chunk = chunks[o.chunk];
      const auto mb = static_cast<std::size_t>(o.micro_batch);
      PairTimes& own = chunk.own[mb];
      std::int64_t ready = lean_ready(o.kind, own);
      [[maybe_unused]] std::int32_t from = Margins ? lean_input_rank(o.kind, chunk) : -1;
      if (Pairs && o.pairs_with_next && ready >= 0) {
        // An overlapped pair (input_ready_at): it waits for the next op's input too (op i + 1
        // exists: the loop stops before the rank's last op, which pairs with none).
        const ScheduleOp second = ops[i + 1];
        const LeanChunk& second_chunk = chunks[second.chunk];
        const std::int64_t other = lean_ready(second.kind, second_chunk.own[static_cast<std::size_t>(second.micro_batch)]);
        if constexpr (Margins) {
          if (other >= 0) {
            const std::int32_t other_from = lean_input_rank(second.kind, second_chunk);
            if (from >= 0 && other_from >= 0) note_margin(from, other_from, ready - other, true);
            if (other > ready) from = other_from;
          }
        }
        ready = other < 0 ? kUnknown : std::max(ready, other);
      }
      if (ready < 0) {
        out = Lean::blocked;
        break;
      }
      if constexpr (Margins) {
        if (from >= 0) note_margin(r, from, free - ready, false);
      }
      if (chunk.reduce_at == static_cast<std::int64_t>(i)) break;  // step() issues the reduction
      const std::int64_t start = std::max(free, ready);
      const NsRunShape& shape = *chunk.shape[static_cast<std::size_t>(o.kind)];
      if (lane_end > start + shape.first_lane) break;  // a collective may wait: step() books it
      if (start > free) {
        if (free >= collectives_end) {
          clear_gap += start - free;
        } else {
          a.gaps.push_back({free, start});
        }
      }
      const std::int64_t end = start + shape.ns;
      busy += shape.compute_ns;  // the compute window's end is the last op's (step())
      ++chunk.ran[static_cast<std::size_t>(o.kind)];
      prev_start = start;
      free = end;
      std::int32_t to = -1;
      if (o.kind == OpKind::forward) {
        if (chunk.next != nullptr) {
          to = chunk.next_rank;
          chunk.next[mb][kFwdReady] = deliver(lane, lane_end, end, chunk.next_local, chunk.send_activation);
        } else {
          own[kBwdReady] = end;  // the loss (op_finished)
        }
      } else if (o.kind == OpKind::backward) {
        own[kBDone] = end;
        if (chunk.prev != nullptr) {
          to = chunk.prev_rank;
          chunk.prev[mb][kBwdReady] = deliver(lane, lane_end, end, chunk.prev_local, chunk.send_gradient);
        }
      }
      if (to >= 0 && to != r) wake(to);
      if ((++polls & 4095u) == 0 && cancel_requested()) [[unlikely]] {
        ++i;
        out = Lean::cancelled;
        break;
      }
    }
    if (i >= rank_limit && out == Lean::other) out = Lean::blocked;
    polls_ = polls;
    next_[ri] = i;
    free_[ri] = free;
    prev_start_[ri] = prev_start;
    busy_[ri] = busy;
    a.clear_gap_ns = clear_gap;
    return out;
  }
  // When an output of an op that ended at `end` reaches its consumer: at once on the same rank,
  // else after its send of `ns` on this rank's lane (communicate() for a send without spans).
  // place() books it at the lane's end or in a gap before, so the lane then ends at the later of
  // `lane_end` and the arrival.
  [[gnu::always_inline]] static std::int64_t deliver(CommLane& lane, std::int64_t& lane_end, std::int64_t end,
                                                     bool same_rank, std::int64_t ns) {
    if (same_rank || ns <= 0) return end;
    const std::int64_t arrival = lane.place(end, ns) + ns;
    lane_end = std::max(lane_end, arrival);
    return arrival;
  }
  // op_input_ready() for an op of `kind` whose pair times are `t`.
  [[gnu::always_inline]] static std::int64_t lean_ready(OpKind kind, const PairTimes& t) {
    return kind == OpKind::forward    ? t[kFwdReady]
           : kind == OpKind::backward ? t[kBwdReady]
                                      : t[kBDone];
  }
  // What run_lean() needs of one of a rank's chunks, gathered once per run: its rows of times_,
  // the ranks its outputs go to, its op shapes and sends. The pointers hold for the whole run:
  // times_ and ran_ are sized by the constructor and never reallocated after it.
  struct LeanChunk {
    PairTimes* own = nullptr;   // times_ of the chunk, by micro-batch
    PairTimes* next = nullptr;  // of the chunk its forwards feed; null: they end in the loss
    PairTimes* prev = nullptr;  // of the chunk its backwards feed; null: none
    std::int32_t* ran = nullptr;  // its ops run, by OpKind (ran_)
    std::array<const NsRunShape*, 3> shape{};  // by OpKind
    std::int64_t send_activation = 0, send_gradient = 0;
    std::int64_t reduce_at = -1;  // the op that issues its gradient reduction (step() runs it)
    std::int32_t next_rank = -1, prev_rank = -1;
    // The output goes to a chunk of the same rank without a send (not across a turn_chunk_).
    bool next_local = false, prev_local = false;
  };
  // input_rank() for an op of `kind` of `chunk` (-1: none, or the op's own rank).
  [[gnu::always_inline]] static std::int32_t lean_input_rank(OpKind kind, const LeanChunk& chunk) {
    return kind == OpKind::forward ? (chunk.prev != nullptr ? chunk.prev_rank : -1)
           : kind == OpKind::backward ? (chunk.next != nullptr ? chunk.next_rank : -1)
                                      : -1;
  }
  void build_lean_chunks() {
    const auto p = static_cast<std::size_t>(t_.p), v = static_cast<std::size_t>(t_.v);
    lean_.assign(p * v, LeanChunk{});
    for (std::size_t k = 0; k < p * v; ++k) {
      LeanChunk& lc = lean_[k];
      const std::int32_t g = global_of_[k];
      const NsChunkCost& c = cost(g);
      lc.own = &times_[pair(g, 0)];
      lc.ran = &ran_[static_cast<std::size_t>(g) * 3];
      const auto r = static_cast<std::int32_t>(k / v);
      if (g + 1 < stages_ && g + 1 != second_start_) {
        lc.next = &times_[pair(g + 1, 0)];
        lc.next_rank = rank_of_[static_cast<std::size_t>(g) + 1];
        lc.next_local = lc.next_rank == r && g != turn_chunk_;
      }
      if (g > 0 && g != second_start_) {
        lc.prev = &times_[pair(g - 1, 0)];
        lc.prev_rank = rank_of_[static_cast<std::size_t>(g) - 1];
        lc.prev_local = lc.prev_rank == r && g - 1 != turn_chunk_;
      }
      for (std::size_t kind = 0; kind < 3; ++kind) lc.shape[kind] = &c.shapes[shape_index_[kind]];
      lc.send_activation = c.send_activation;
      lc.send_gradient = c.send_gradient;
      if (in_.dp_issue == DpReduceIssue::per_chunk) lc.reduce_at = last_bwd_[k];
    }
  }

  // The steady state (steady_state.h): runs every rank into its periods, then a period more at a
  // time (later several), comparing the state after each with those before; once the state
  // repeats up to a shift, skips the periods that can only repeat it. Leaves every rank free to
  // run to its end. False when cancelled.
  bool skip_steady_state() {
    const auto p = static_cast<std::size_t>(t_.p);
    const auto v = static_cast<std::size_t>(t_.v);
    if (!skippable(t_)) return true;
    // Ops with one-off work (a chunk's first forward and backward when they gather its
    // parameters, its last backward when it issues the chunk's gradient reduction, the rank's
    // last op, which closes its bubble window) stay out of the periods.
    std::vector<std::size_t> first(p, 1), end(p);
    for (std::size_t r = 0; r < p; ++r) {
      end[r] = t_.ranks[r].empty() ? 0 : t_.ranks[r].size() - 1;
      for (std::size_t c = r * v; c < (r + 1) * v; ++c) {
        const NsChunkCost& cc = cost(global_of(static_cast<std::int32_t>(r), static_cast<std::int32_t>(c - r * v)));
        if (cc.param_gather > 0) {
          for (const std::int64_t i : {first_f_[c], first_b_[c]}) first[r] = std::max(first[r], static_cast<std::size_t>(i + 1));
        }
        if (last_bwd_[c] >= 0 && cc.dp_reduce > 0 && in_.dp_issue == DpReduceIssue::per_chunk) {
          end[r] = std::min(end[r], static_cast<std::size_t>(last_bwd_[c]));
        }
      }
      if (first[r] >= end[r]) return true;
    }
    if (t_.kind == PipelineSchedule::gpipe) {
      // GPipe runs all its forwards, then all its backwards: no period spans both halves, but
      // each may have its own, one op a micro-batch. Each half is a flow line (stage after stage
      // for the forwards, back for the backwards): its state repeats only when the stage that
      // feeds it is the slowest, so that every later one waits for its input; a slower stage
      // after it gathers a backlog that grows to the end of the half (Narayanan's 1 T model: the
      // last stage's LM head makes its forwards 2.6 % slower), and such a half is not searched.
      std::vector<std::size_t> mid(p), forwards_end(p), backwards_first(p);
      for (std::size_t r = 0; r < p; ++r) {
        mid[r] = t_.ranks[r].size() / 2;
        forwards_end[r] = std::min(mid[r], end[r]);
        backwards_first[r] = std::max(mid[r], first[r]);
      }
      if (feeder_is_slowest(OpKind::forward) && !skip_region(first, forwards_end, 1)) return false;
      if (feeder_is_slowest(OpKind::backward) && !skip_region(backwards_first, end, 1)) return false;
    } else if (!skip_region(first, end, 0)) {
      return false;
    }
    return finish_skipping();
  }

  // GPipe (one chunk a rank): whether the stage that starts the flow of `kind` ops (the first for
  // forwards, the last for backwards) takes at least as long per op as every other, an op's
  // time on a stage being the longer of its compute and its send on the lane.
  bool feeder_is_slowest(OpKind kind) const {
    const bool forward = kind == OpKind::forward;
    const auto pace = [&](std::int32_t g) {
      const NsChunkCost& c = cost(g);
      const bool sends = forward ? g + 1 < stages_ : g > 0;
      return std::max(c.shapes[shape_index(kind)].ns, sends ? (forward ? c.send_activation : c.send_gradient) : 0);
    };
    const std::int64_t feeder = pace(forward ? 0 : stages_ - 1);
    for (std::int32_t g = 0; g < stages_; ++g) {
      if (pace(g) > feeder) return false;
    }
    return true;
  }

  // The steady-state skip over the ops [first[r], end[r]) of every rank (steady_state.h's
  // arguments); false when cancelled. Leaves each rank where its last cut, or the skip, put it.
  bool skip_region(const std::vector<std::size_t>& first, const std::vector<std::size_t>& end,
                   std::size_t ops_per_micro_batch) {
    const auto p = static_cast<std::size_t>(t_.p);
    for (std::size_t r = 0; r < p; ++r) {
      if (first[r] >= end[r]) return true;
    }
    const TableKnown known = generated_ ? TableKnown::generated : TableKnown::nothing;
    const std::optional<SteadyPeriod> period = periods_ != nullptr
                                                   ? periods_->find(t_, first, end, known, ops_per_micro_batch)
                                                   : find_steady_period(t_, first, end, known, ops_per_micro_batch);
    if (!period) return true;
    for (std::size_t r = 0; r < p; ++r) {
      const std::size_t periods = (period->copies_end[r] - period->begin[r]) / period->ops[r];
      if (periods < kSkipMinPeriods || periods * static_cast<std::size_t>(period->micro_batches) < 2 * p + 16) return true;
    }
    // A steady state may repeat itself only every few periods (alternating patterns when stages
    // or their lanes differ; with p2p latency, 1F1B's critical circuit runs through every stage
    // and back, and its cycle is p periods), so each period's snapshot is hashed up to the shift
    // (shape_hash) and looked up among those before it; a match `cycle` periods back is then
    // compared exactly and the skip starts there. The snapshots of the first periods are kept,
    // so a match among them is compared at once. After those, a run still in its transient (one
    // that takes hundreds of periods: nearly balanced stages, where a backlog of the warm-up
    // drains by the small difference of their periods) keeps only each snapshot's hash; a match
    // there keeps that snapshot, which is compared `cycle` periods later.
    const auto& ops = period->ops;
    std::unordered_map<std::uint64_t, std::int64_t> seen;  // shape -> periods done when seen
    std::vector<SteadySnapshot> kept(std::min<std::size_t>(2 * p + 8, kSkipMaxCycle) + 1);
    const auto kept_periods = static_cast<std::int64_t>(kept.size());
    SteadySnapshot shape, candidate;     // after the kept ones: this period's, a match's
    std::int64_t candidate_at = -1, candidate_cycle = 0;
    SteadySnapshot last;  // the last cut's, when no skip came after it (last_done >= 0)
    bool own_periods = false;  // the last two cuts' states repeat with a shift per rank
    std::int64_t own_retry_wait = 0, own_retry_at = 0, own_stalls = 0;
    std::int64_t last_done = -1;
    record_margins_ = false;
    // Each rank may run to the start of its periods, then a period further each time. Where it
    // stops (there, or short of it waiting for a rank held back) is the cut: the ops run so far
    // are what the simulation has run, whichever order it ran them in.
    // A period of a micro-batch group (Megatron's interleaved order) starts where the rank's
    // warm-up ends, while the first backward wave is still on its way through the stages: the
    // state cannot repeat there yet, and half a period on it has (64 x 4 x 1024: a period of 512
    // ops a rank found one period earlier, bench/results/time-core-cpu.txt). So the first cut is
    // half such a period in. Any cut gives the same figures (the skip is exact); periods of one
    // micro-batch (a few ops) keep theirs at the start, which measured best for them.
    std::size_t period_ops = 0;
    for (const std::size_t n : ops) period_ops += n;
    const auto kept_stride = static_cast<std::int64_t>(std::clamp<std::size_t>((kMinOpsPerCut + period_ops - 1) / period_ops, 1, kSparsePeriods));
    limit_ = period->begin;
    if (period->micro_batches > 1) {
      for (std::size_t r = 0; r < p; ++r) limit_[r] += ops[r] / 2;
    }
    std::vector<std::size_t> cut_before;  // next_ at the last cut
    for (std::int64_t periods_done = 0;;) {
      queue_all();
      if (!drain()) return false;
      // A rank held back before its first compute would still record its window's start.
      for (std::size_t r = 0; r < p; ++r) {
        if (activity_[r].compute_begin_ns > activity_[r].compute_end_ns) return true;
      }
      // No rank moved though every limit moved on: nothing ever will (a table that deadlocks;
      // the run after the search reports it).
      if (cut_before == next_) return true;
      cut_before = next_;
      const bool in_kept = periods_done < kept_periods;
      const bool due = candidate_at >= 0 && periods_done == candidate_at + candidate_cycle;
      SteadySnapshot& now = in_kept ? kept[static_cast<std::size_t>(periods_done)] : shape;
      take_snapshot(now);
      if (due) {
        if (skip_from(*period, candidate, now, candidate_cycle, false).cycles > 0) break;
        candidate_at = -1;
      }
      // Ranks that move on by periods of their own (period_shifts): the state since the last cut
      // repeats with a shift per rank while every decision between ranks that move apart keeps
      // its side; the skip goes to the first such decision that may change (margin_cycles), and
      // the run goes on from there, a cut a period, to the next. DualPipeV at 64 x 1024: after the
      // warm-up each rank works off its backlog at its own pace until the slower pace of rank 0
      // (its two chunks hold the embedding and the LM head) reaches it, a front moving up the
      // ranks a few micro-batches apart (bench/results/time-core-cpu.txt).
      std::int64_t own_skipped = 0;
      if (last_done >= 0 && periods_done >= own_retry_at) {
        const bool margins = record_margins_;
        const Skipped skipped = skip_from(*period, last, now, periods_done - last_done, !own_periods, margins);
        if (skipped.all) break;
        own_skipped = skipped.cycles;
        // A state that does not repeat per rank, or repeats but keeps a decision on its edge
        // (kOwnStalls comparisons in a row without a skip), is looked at again less and less
        // often: comparing every cut cost ZB-H1's transient 5 % (its deferred Ws' inputs lag their
        // ranks' clocks), and a cut every period kept a state that repeats over several periods
        // from the uniform search's strides.
        own_stalls = skipped.own_periods && margins && skipped.cycles == 0 ? own_stalls + 1 : 0;
        const bool own = skipped.own_periods && own_stalls < kOwnStalls;
        if (skipped.cycles > 0) own_retry_wait = 0;
        if (!own) own_retry_wait = std::clamp<std::int64_t>(2 * own_retry_wait, 1, 64);
        own_retry_at = own ? periods_done : periods_done + own_retry_wait;
        if (skipped.cycles > 0) {
          periods_done += skipped.cycles * (periods_done - last_done);
          seen.clear();
          candidate_at = -1;
        }
        own_periods = own;
        if (skipped.cycles > 0) {
          // The skip ends where a decision may change side, in the period after it: the next
          // cut starts the next comparison instead of ending one that holds that change.
          last_done = -1;
        } else {
          last = now;
          last_done = periods_done;
        }
      } else {
        last = now;
        last_done = periods_done;
      }
      // The uniform search, but while ranks move apart and their skips go on (a state that
      // repeats per rank does not repeat as a whole; hashing it at every cut cost DualPipeV 5 %).
      if (own_skipped == 0 && (!own_periods || own_stalls > 0)) {
        auto [it, fresh] = seen.try_emplace(shape_hash(now, ops, period->micro_batches, periods_done), periods_done);
        if (!fresh) {
          const std::int64_t cycle = periods_done - it->second;
          if (in_kept) {
            if (skip_from(*period, kept[static_cast<std::size_t>(it->second)], now, cycle, false).cycles > 0) break;
          } else if (candidate_at < 0 && cycle <= static_cast<std::int64_t>(kSkipMaxCycle)) {
            std::swap(candidate, now);
            candidate_at = periods_done;
            candidate_cycle = cycle;
          }
          it->second = periods_done;
        }
      }
      margins_.clear();
      // The next cut: a period on for the first kDensePeriods (a state that repeats at once is
      // found at once: the default plan's), then, while snapshots are kept, kept_stride periods
      // on, at least kMinOpsPerCut ops of all ranks; after, kSparsePeriods on (and at a
      // candidate's due period). A snapshot of a 64-stage run and stopping every rank for it
      // cost about as much as simulating one of ZB-H1's periods (3 ops a rank), and a transient
      // of hundreds of periods (ZB-H1's, DualPipe's) spent more on them than on its ops. A state
      // that repeats every c periods then matches lcm(c, stride) periods on, and the skip moves
      // whole such cycles. Where a cut leaves each rank is the same whichever steps it took
      // there (each runs as far as its inputs and limit allow); the cuts are compared exactly
      // before any skip.
      std::int64_t next = periods_done + (periods_done < kDensePeriods ? 1 : kept_stride);
      if (next > kept_periods) next = kept_periods + ((periods_done - kept_periods) / kSparsePeriods + 1) * kSparsePeriods;
      record_margins_ = own_periods;
      if (own_periods) next = periods_done + 1;
      if (candidate_at >= 0) next = std::min(next, candidate_at + candidate_cycle);
      // ... while a period after it could still be skipped.
      for (std::size_t r = 0; r < p; ++r) {
        const std::size_t reach = repeats_until(*period, r);
        const auto left = static_cast<std::int64_t>((reach - std::min(next_[r], reach)) / ops[r]);
        next = std::min(next, periods_done + left - 1);
      }
      if (next <= periods_done) break;
      for (std::size_t r = 0; r < p; ++r) limit_[r] = next_[r] + static_cast<std::size_t>(next - periods_done) * ops[r];
      periods_done = next;
    }
    record_margins_ = false;
    margins_.clear();
    return true;
  }

  bool finish_skipping() {
    for (std::size_t r = 0; r < limit_.size(); ++r) limit_[r] = t_.ranks[r].size();
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
                    bool own_only, bool margins = false) {
    std::vector<std::size_t> ops(period.ops.size());
    std::int64_t cycles = INT64_MAX;
    for (std::size_t r = 0; r < ops.size(); ++r) {
      ops[r] = static_cast<std::size_t>(cycle) * period.ops[r];
      const std::size_t reach = repeats_until(period, r);
      if (before.cut[r] < period.begin[r] || now.cut[r] != before.cut[r] + ops[r] || now.cut[r] > reach) return {};
      cycles = std::min(cycles, static_cast<std::int64_t>((reach - now.cut[r]) / ops[r]));
    }
    const auto shift = static_cast<std::int32_t>(cycle * period.micro_batches);
    const std::vector<std::int64_t> ns = period_shifts(before, now, shift, own_only);
    if (ns.empty()) return {};
    Skipped out;
    const std::int64_t to_end = cycles;
    if (std::any_of(ns.begin(), ns.end(), [&](std::int64_t x) { return x != ns[0]; })) {
      out.own_periods = true;
      if (!margins) return out;
      cycles = std::min(cycles, margin_cycles(ns));
    }
    if (cycles <= 0 || skip_periods(before, now, ops, shift, cycles, ns) == 0) return out;
    out.cycles = cycles;
    out.all = cycles == to_end;
    return out;
  }

  void wake(std::int32_t r) {
    auto& q = queued_[static_cast<std::size_t>(r)];
    if (!q) {
      q = 1;
      std::size_t tail = work_head_ + work_count_;
      if (tail >= work_.size()) tail -= work_.size();
      work_[tail] = r;
      ++work_count_;
    }
  }

  // Runs rank r's next op if its inputs are known; false when blocked or finished.
  bool step(std::int32_t r) {
    const auto ri = static_cast<std::size_t>(r);
    const auto& ops = t_.ranks[ri];
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
    const bool record = a.compute_begin_ns > a.compute_end_ns || next_[ri] + 1 == ops.size();
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
    }
  }

  static constexpr std::size_t kSkipMinPeriods = 6;
  static constexpr std::int64_t kOwnStalls = 2;  // skip_region
  static constexpr std::size_t kSkipMaxCycle = 256;  // periods; longer cycles are simulated
  static constexpr std::int64_t kSparsePeriods = 8;
  // Cuts while snapshots are kept (skip_region), chosen over 256-4096 ops and 2-32 dense periods
  // on bench_estimate.cpp's plans (bench/results/time-core-cpu.txt, 2026-11-27): ZB-H1 and
  // DualPipe(V) at 64 x 1024 within 1 % of their best, the default plan unchanged (2 dense
  // periods cost it 13 %, which saves 64-stage 1F1B 10 %).
  static constexpr std::size_t kMinOpsPerCut = 2048;
  static constexpr std::int64_t kDensePeriods = 4;
  bool generated_;                  // the table is make_schedule()'s (run_simulation)
  SteadyPeriods* periods_;          // shared with other runs of the table, or null
  // Ops may run by their shape (NsRunShape) when nothing needs their lane segments booked: no
  // timeline is kept, and no ZeRO-3 gather is issued ahead into the lane's gaps.
  bool shape_path_ = false;
  bool pairs_ = true;  // the table may hold overlapped pairs (drain)
  std::vector<std::size_t> limit_;  // per rank: ops it may run for now (all but while skipping)
  std::vector<LeanChunk> lean_;     // per (rank, local chunk), r * v + c (shape_path_ only)
  std::uint32_t polls_ = 0;
  std::vector<char> queued_;        // rank is in work_
  std::vector<std::int32_t> work_;  // ranks to step, a ring of capacity p from work_head_
  std::size_t work_head_ = 0, work_count_ = 0;
};

}  // namespace

namespace {

// Whether the ranks' threads outnumber the processors they share (the shared processor model).
bool shares_processors(const SimulationInput& input, std::int64_t ranks) {
  return input.shared_processors > 0 && input.threads_per_rank * ranks > input.shared_processors;
}

// DualPipe's costs as its lower half's V (simulation_costs.h): chunk g of the V is DualPipe's
// chunk g on the way down and p + g on the way back up. None when the two pipelines differ.
std::optional<std::vector<NsChunkCost>> mirrored_costs(const std::vector<NsChunkCost>& costs, std::size_t p) {
  if (costs.size() == 1) return costs;
  if (costs.size() != 2 * p) return std::nullopt;
  for (std::size_t s = 0; s < p; ++s) {
    if (!(costs[s] == costs[p + s])) return std::nullopt;
  }
  std::vector<NsChunkCost> v(p);
  for (std::size_t g = 0; g < p; ++g) v[g] = costs[g < p / 2 ? g : p + g];
  return v;
}

// DualPipe's costs as its lower half's V, when the half may stand for every rank.
std::optional<std::vector<NsChunkCost>> lower_half_costs(const SimulationInput& input, std::int64_t p) {
  if (input.keep_timeline || p < 2 || p % 2 != 0 || shares_processors(input, p)) return std::nullopt;
  const auto costs = to_ns_costs(input, 2 * static_cast<std::size_t>(p));
  if (!costs.ok()) return std::nullopt;
  return mirrored_costs(*costs, static_cast<std::size_t>(p));
}

// `generated`: the table comes from make_schedule(), whose generators run every (rank, chunk,
// kind)'s micro-batches in order (pipeline_schedule_test checks each), so the steady state's
// search need not walk the table to check it.
Result<SimulationResult> run_simulation(const ScheduleTable& table, const SimulationInput& input, bool generated,
                                        SteadyPeriods* periods = nullptr) {
  auto costs = to_ns_costs(input, static_cast<std::size_t>(table.stages()));
  if (!costs.ok()) return costs.errors();
  if (shares_processors(input, table.p)) return simulate_shared(table, input, std::move(costs).value());
  return DedicatedRun(table, input, std::move(costs).value(), generated, periods).run();
}

}  // namespace

Result<SimulationResult> simulate(const ScheduleTable& table, const SimulationInput& input) {
  if (auto errors = check_schedule(table); !errors.empty()) return errors;
  return run_simulation(table, input, false);
}

Result<SimulationResult> simulate_well_formed(const ScheduleTable& table, const SimulationInput& input,
                                              SteadyPeriods* periods) {
  return run_simulation(table, input, true, periods);
}

bool dualpipe_mirrors(const SimulationInput& input, std::int64_t p) { return lower_half_costs(input, p).has_value(); }

Result<SimulationResult> simulate_dualpipe_lower_half(const ScheduleTable& half, const SimulationInput& input,
                                                      SteadyPeriods* periods) {
  auto costs = half.kind == PipelineSchedule::dualpipev ? lower_half_costs(input, 2 * std::int64_t{half.p}) : std::nullopt;
  if (!costs) {
    return make_error("simulation.chunks",
                      "DualPipe's lower half does not stand for all its ranks here: its two pipelines differ in "
                      "cost, a timeline is asked for, or the ranks share processors; simulate the whole table");
  }
  return DedicatedRun(half, input, std::move(*costs), true, periods, half.p - 1).run();
}

std::int64_t expected_simulated_ops(const ScheduleTable& table) {
  std::int64_t ops = 0;
  for (const auto& row : table.ranks) ops += static_cast<std::int64_t>(row.size());
  if (table.kind == PipelineSchedule::gpipe || !skippable(table)) return ops;
  const std::int64_t p = table.p, v = table.v;
  return std::min(ops, 10 * p * p * v);
}

}  // namespace plansight::estimator
