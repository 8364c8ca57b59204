// Private to the simulator: the one event engine of an iteration, whatever runs its ranks' compute.
// It holds what a schedule's execution is made of, the same for every processor model: which op
// of each rank runs next and when its inputs arrive, the ZeRO-3 gathers before a chunk's first
// ops, the pipeline sends and data-parallel reductions after an op, the reductions and the
// optimizer step that end a rank's iteration, the communication lanes, the spans and names of the
// predicted timeline, and the results. The processor models drive it (pipeline_simulator.cpp):
//  - dedicated: every rank has its processors; an op's time never depends on the others, so a
//    worklist runs each rank as far as its inputs allow, in any order (the result is the same);
//  - shared: the ranks' threads outnumber the processors (shared_processor_simulator.cpp); a
//    computing rank slows while others compute, so ranks advance together in time order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/schedule_metrics.h"
#include "schedule_rows.h"
#include "simulation_costs.h"

namespace plansight::estimator {

// Bytes of the per-run arrays this thread keeps for its next run (iteration_engine.cpp).
std::size_t thread_kept_array_bytes();

class IterationEngine {
 public:
  // `rows`: the table's ops as the run reads them (schedule_rows.h), which must outlive the
  // engine; null: the table's own lists.
  IterationEngine(const ScheduleTable& t, const ScheduleRows* rows, const SimulationInput& in,
                  NsCosts costs, bool keep_spans);
  ~IterationEngine();
  IterationEngine(const IterationEngine&) = delete;
  IterationEngine& operator=(const IterationEngine&) = delete;

 protected:
  static constexpr std::int64_t kUnknown = -1;

  std::size_t pair(std::int32_t global, std::int32_t mb) const {
    return static_cast<std::size_t>(global) * static_cast<std::size_t>(m_) + static_cast<std::size_t>(mb);
  }
  // ScheduleTable::global_chunk, looked up (once per op; DualPipe's V shape costs a division).
  std::int32_t global_of(std::int32_t r, std::int32_t chunk) const {
    return global_of_[static_cast<std::size_t>(r) * static_cast<std::size_t>(t_.v) + static_cast<std::size_t>(chunk)];
  }
  const NsChunkCost& cost(std::int32_t g) const { return costs_[static_cast<std::size_t>(g)]; }
  // The index in NsChunkCost::shapes of an op of kind k (the backward's depends on split_backward).
  std::size_t shape_index(OpKind k) const { return shape_index_[static_cast<std::size_t>(k)]; }
  Track& compute_track(std::int32_t r) { return tl_.tracks[2 * static_cast<std::size_t>(r)]; }
  Track& comm_track(std::int32_t r) { return tl_.tracks[2 * static_cast<std::size_t>(r) + 1]; }

  // The segments an op runs: F's, W's, and B's (with recomputation first: `recompute` is
  // non-null only for B).
  const std::vector<NsSegment>& op_segments(const ScheduleOp& o, const NsChunkCost& c) const {
    return o.kind == OpKind::forward       ? c.forward
           : o.kind == OpKind::weight_grad ? c.weight_grad
           : t_.split_backward             ? c.backward
                                           : c.fused_backward;
  }
  // The op's span name: slot 0 F, 1 B, 2 W, 3 R (4, 5: the sends of F and B).
  std::int32_t op_name(const ScheduleOp& o, std::int32_t g, bool recompute = false) {
    if (!keep_) return -1;
    if (recompute) return op_name(3, 'R', "", g, o.micro_batch);
    return o.kind == OpKind::forward ? op_name(0, 'F', "", g, o.micro_batch)
           : o.kind == OpKind::backward ? op_name(1, 'B', "", g, o.micro_batch)
                                        : op_name(2, 'W', "", g, o.micro_batch);
  }
  // Interned names with a direct-indexed cache (Timeline::intern is linear, too slow here).
  // Without kept spans nothing is named.
  std::int32_t op_name(int slot, char letter, const char* prefix, std::int32_t g, std::int32_t mb) {
    return keep_ ? intern_op_name(slot, letter, prefix, g, mb) : -1;
  }
  // The name of labelled segments (a group's collectives), interned on first use.
  std::int32_t label_name(std::int32_t label);
  std::int32_t other_name(const std::string& text);
  std::int32_t segment_name(const NsSegment& s, std::int32_t op) { return s.label >= 0 && keep_ ? label_name(s.label) : op; }

  Span span(std::int64_t start, std::int64_t ns, const NsSegment& s, std::int32_t name, std::int32_t g,
            std::int32_t mb) const;

  // Books a collective or send on rank r's communication lane from `issue`; returns its end.
  // Collectives also count for the bubble (RankActivity::collectives).
  std::int64_t communicate(std::int32_t r, std::int64_t issue, std::int64_t ns, SpanKind kind, std::int32_t name,
                           std::int32_t g, std::int32_t mb, double bytes = 0);

  // With the timeline kept: the overlapped collectives (OpSegment::overlapped) of rank r's op `o`
  // of chunk g, whose compute spans are those of its compute track from `first_span` on, on the
  // rank's overlapped-communication track: back to back, poured into the op's compute spans
  // (hidden by compute, never beside its exposed collectives; a B's recomputation's under its
  // recomputation, the B's own under the rest), cut where they end.
  void draw_overlapped(std::int32_t r, const ScheduleOp& o, std::int32_t g, std::size_t first_span) {
    if (overlapped_tracks_ >= 0 && !cost(g).overlapped.empty()) draw_overlapped_spans(r, o, g, first_span);
  }

  // When the inputs of rank r's next op `o` (global chunk g) arrive; kUnknown while a producer
  // has not run.
  std::int64_t input_ready(std::int32_t r, const ScheduleOp& o, std::int32_t g) const {
    return input_ready_at(r, next_[static_cast<std::size_t>(r)], o, g);
  }
  // The same for rank r's op i, `o`.
  [[gnu::always_inline]] std::int64_t input_ready_at(std::int32_t r, std::size_t i, const ScheduleOp& o,
                                                     std::int32_t g) const {
    const std::int64_t own = op_input_ready(o, g);
    if (!o.pairs_with_next) [[likely]] return own;
    if (own < 0) return kUnknown;
    // An overlapped pair (DualPipe's F&B) waits for its second op's input too.
    const ScheduleOp& second = rows_->data(static_cast<std::size_t>(r))[i + 1];
    const std::int64_t other = op_input_ready(second, global_of(r, second.chunk));
    return other < 0 ? kUnknown : std::max(own, other);
  }
  [[gnu::always_inline]] std::int64_t op_input_ready(const ScheduleOp& o, std::int32_t g) const {
    // The op's kind reads the plane of the same index (kFwdReady, kBwdReady, kBDone).
    static_assert(static_cast<std::size_t>(OpKind::forward) == kFwdReady &&
                  static_cast<std::size_t>(OpKind::backward) == kBwdReady &&
                  static_cast<std::size_t>(OpKind::weight_grad) == kBDone);
    return time(static_cast<std::size_t>(o.kind), pair(g, o.micro_batch));
  }
  // The start of rank r's next op `o` once it may start at `earliest`: after its ZeRO-3
  // parameter gather when it is the chunk's first F or B (prefetched: issued when the rank's
  // previous op started).
  std::int64_t gather_before(std::int32_t r, const ScheduleOp& o, std::int32_t g, std::int64_t earliest);
  // Rank r's next op `o` ran over [start, end]: its outputs leave (the activation or gradient
  // send, or the loss), the chunk's gradient reduction is issued after its last backward, and the
  // rank moves to its next op. Returns the rank that may now run (-1: none).
  std::int32_t op_finished(std::int32_t r, const ScheduleOp& o, std::int32_t g, std::int64_t start, std::int64_t end);
  // After rank r's last op (which ended at free_[r]): its reductions when not overlapped; returns
  // when its optimizer step may start.
  std::int64_t step_may_start(std::int32_t r);
  // Rank r's optimizer step ran over [start, end]: its span, then ZeRO-1/2's parameter
  // all-gather. Records the rank's end of the iteration.
  void step_ran(std::int32_t r, std::int64_t start, std::int64_t end);
  // The result, with every rank's step done; `bubbles` from the recorded activity or the spans.
  SimulationResult results(const ScheduleBubbles& bubbles);

  // The steady state's skip (steady_state.h), for runs without spans. A snapshot holds what of
  // the run decides its future, taken where every rank r has run its first cut[r] ops: per rank
  // its clock, the start of its last op, where its collectives end, the tail of its
  // communication lane; per global chunk the micro-batches whose arrival times are still to be
  // read (SteadySnapshot::windows: between what its consumers and its producers have run); and
  // what only adds up (compute time, gap time and lists). The pending times themselves are not
  // copied: each (chunk, micro-batch) time is written once, by its producer, so times_ still
  // holds them when two snapshots are compared (copying them was a quarter of a 64-stage ZB-H1
  // estimate).
  static constexpr std::size_t kRankFields = 5, kPending = 3;
  struct Window {
    std::int32_t first, count;  // micro-batches first .. first + count - 1
  };
  struct SteadySnapshot {
    std::vector<std::size_t> cut;       // per rank: the ops it has run (next_)
    std::vector<std::int32_t> ran;      // per (global chunk, op kind): ops run, its pipeline's first `ran` micro-batches
    std::vector<std::int64_t> rank;     // per rank: kRankFields values
    std::vector<std::size_t> lists;     // per rank: gaps and collectives recorded so far
    std::vector<std::int64_t> lane;     // every rank's lane tail, [start, end) pairs
    std::vector<std::size_t> lane_at;   // per rank + 1: its first value in `lane`
    // Per (global chunk, which), g * kPending + which, once fill_windows() ran: chunk g's pending
    // micro-batches, which 0 the inputs of its forwards (kFwdReady), 1 the output gradients of its
    // backwards (kBwdReady), 2 its backwards' ends its Ws need (kBDone).
    std::vector<Window> windows;
    bool windows_set = false;
    std::size_t bytes() const {
      return (cut.capacity() + lists.capacity() + lane_at.capacity()) * sizeof(std::size_t) +
             ran.capacity() * sizeof(std::int32_t) + (rank.capacity() + lane.capacity()) * sizeof(std::int64_t) +
             windows.capacity() * sizeof(Window);
    }
  };

  // Snapshots for the steady state's search (skip_region), kept per thread between runs with the
  // engine's other arrays: a search fills one per cut it keeps (DualPipeV at 64 x 1024: about 200
  // a run, 7 vectors each), and allocating them was a third of an estimate's allocations. Grown
  // to at least n; what a taken snapshot holds is all take_snapshot()'s.
  std::vector<SteadySnapshot>& snapshots(std::size_t n) {
    if (snapshots_.size() < n) snapshots_.resize(n);
    return snapshots_;
  }
  // Sets s.windows from the snapshot's ops run, once: the comparisons and the skip read each
  // window several times, and most snapshots are never compared in full. Only the windows of
  // plain_windows_ and marks_windows_ are set (the others are always empty).
  void fill_windows(SteadySnapshot& s) const;
  // What the comparisons and skips read of each window that may hold micro-batches, found once a
  // run (prepare_windows): which chunk and plane it is, the rank that writes it, where its counts
  // come from. Looping over every chunk's three windows and telling each time which of them
  // matter, whose they are and where they start cost DualPipeV's 64 x 1024 estimate more at its
  // cuts than the comparisons themselves (bench/results/time-core-cpu.txt).
  struct WindowSpec {
    std::uint32_t k = 0;       // g * kPending + which: its Window in SteadySnapshot::windows
    std::uint32_t which = 0;   // its plane (kFwdReady, kBwdReady, kBDone)
    std::int32_t g = 0;        // its global chunk
    std::int32_t producer = 0; // producer_rank(g, which)
    std::int32_t first_mb = 0; // pipeline_first(g)
    // The window is micro-batches first_mb + ran[lo] .. first_mb + ran[hi] - 1 (indices into
    // SteadySnapshot::ran): what its consumers ran up to what its producers ran.
    std::uint32_t lo = 0, hi = 0;
    // Marks windows: the ran indices of the chunk's ops that write and read them (marks_kinds).
    std::uint32_t writers = 0, readers = 0;
  };
  std::vector<WindowSpec> plain_windows_;  // windows of times that decide when ops start
  std::vector<WindowSpec> marks_windows_;  // windows of marks only (marks_only())
  // Fills plain_windows_ and marks_windows_ for this run's table (once; before any snapshot is
  // compared). A window that is always empty (a first chunk's forward inputs, backward ends
  // without Ws) is in neither.
  void prepare_windows();
  // Whether chunk g's window `which` holds marks only (iteration_engine_steady.cpp), never a time
  // that decides when an op starts: left out of the compared state, written on in a skip.
  bool marks_only(std::int32_t g, std::size_t which) const;
  // The op kinds that write and that read a marks window `which` (kBwdReady: forwards and
  // backwards, kBDone: backwards and Ws).
  static std::pair<OpKind, OpKind> marks_kinds(std::size_t which);
  // The first micro-batch of chunk g's pipeline (DualPipe's second: m/2).
  std::int32_t pipeline_first(std::int32_t g) const;
  // Records the run's state; counts the ops run since the last snapshot (O(ops since)).
  void take_snapshot(SteadySnapshot& s);
  // The snapshot's shape: equal for two snapshots `periods` periods apart (every cut `periods`
  // x ops[r] further, micro-batches `periods` x mb_shift further, every time shifted alike)
  // whose states repeat. `periods_done`: the periods run since the first cut, from which the
  // cuts and micro-batches are counted back. The pending times are not hashed (their windows
  // are): equal shapes are candidates, which rank_shifts() and pending_repeat() compare in full.
  std::uint64_t shape_hash(const SteadySnapshot& s, const std::vector<std::size_t>& ops, std::int32_t mb_shift,
                           std::int64_t periods_done) const;
  // Whether `now` is `before` moved on by T_r on each rank r and `mb_shift` micro-batches, in two
  // steps: rank_shifts() gives T_r > 0 when every clock, lane tail and collective end of rank r is
  // T_r later (empty otherwise; with `own_only`, empty as well when all T_r are equal), and
  // pending_repeat() then whether every pending time is its producer's T later (producer_rank).
  // Both: equal T_r, the run is periodic from here; unequal, it is while no decision between
  // ranks changes side (margin_cycles). The second step compares every pending time (thousands
  // at 64 stages), so a caller asks it only of a state it would skip from. The cuts are the
  // caller's to check; both snapshots are of this run and no skip lies between them (their
  // pending times are read from times_).
  std::vector<std::int64_t> rank_shifts(const SteadySnapshot& before, const SteadySnapshot& now, bool own_only) const;
  bool pending_repeat(SteadySnapshot& before, SteadySnapshot& now, std::int32_t mb_shift,
                      const std::vector<std::int64_t>& ns) const;
  // The rank that writes chunk g's pending time `which` (SteadySnapshot::windows): a first chunk's forward
  // inputs are there at t = 0 (their window is empty), a last chunk's backward input is its own
  // loss.
  std::int32_t producer_rank(std::int32_t g, std::size_t which) const {
    const auto at = static_cast<std::size_t>(g);
    if (which == kFwdReady && g > 0 && g != second_start_) return rank_of_[at - 1];
    if (which == kBwdReady && g + 1 < stages_ && g + 1 != second_start_) return rank_of_[at + 1];
    return rank_of_[at];
  }
  // Moves the run, which is at `now`, on by `periods` periods (`ops[r]` ops of rank r, T_r = ns[r]
  // later, and `mb_shift` micro-batches each), as simulating them would: every clock, lane tail
  // and pending time later, every sum grown and every list extended by what the period `before`
  // -> `now` added. Returns the ops skipped (0: the periods do not fit the iteration).
  std::int64_t skip_periods(const SteadySnapshot& before, const SteadySnapshot& now, const std::vector<std::size_t>& ops,
                            std::int32_t mb_shift, std::int64_t periods, const std::vector<std::int64_t>& ns);

  // skip_periods()'s and skip_drift()'s common steps. Whether every pending time of `now` lands
  // on a micro-batch of its pipeline `periods` periods on, and every marks window's writers ran
  // mb_shift a period with `marks_periods` periods of marks before them (the micro-batches the
  // skip writes are then set up, ensure_times).
  bool skip_lands(const SteadySnapshot& before, const SteadySnapshot& now, std::int32_t mb_shift, std::int64_t periods,
                  std::int32_t marks_periods);
  // Rank r's gaps and collectives recorded between the snapshots, once more for each of
  // `periods` periods: shift(list, i, per period, j) is entry i of the last period's, j periods on.
  template <class Shift>
  void repeat_lists(const SteadySnapshot& before, const SteadySnapshot& now, std::size_t r, std::int64_t periods,
                    Shift shift);
  // The marks of the skipped ops whose readers were not: each a mark `was` of the last period
  // run, `back` periods on, plus back x shift(spec, row, was).
  template <class Shift>
  void write_marks(const SteadySnapshot& before, const SteadySnapshot& now, std::int32_t mb_shift, std::int64_t periods,
                   Shift shift);
  // Every pending time of `now` moved shift_mb micro-batches on (from the top: a window may
  // overlap its destination), plus shift(spec, row, mb).
  template <class Shift>
  void move_pending(const SteadySnapshot& now, std::int64_t shift_mb, Shift shift);

  // Drift: the state moves on by a shift of its own for every time in it (each clock, lane tail,
  // collective end and pending time), the same in two periods in a row. Under decisions that
  // stay the same, one period maps each time to one time before it plus a constant (a max-plus
  // system with its maxima chosen), so the shifts of the next period are those of the last, and
  // every time decided inside a period moves on by a shift of its own too (the comparisons the
  // lean path records, DedicatedRun::exact_cycles). What drift_shifts() finds of three
  // snapshots a period apart, for skip_drift().
  struct Drift {
    // Per rank: its clock's, its last start's, its collectives' end (0 while past) and its lane
    // tail's shift (one for all its values), its compute time a period, its clear gap time in the
    // last period and its change from the period before.
    std::vector<std::int64_t> clock, last_start, collective, lane, busy, clear_gap, clear_gap_change;
  };
  // Whether s0 -> s1 -> s2 (three cuts a period apart, no skip between them: their pending times
  // are read from times_) move on by the same shift of every time twice, every window
  // `mb_shift` micro-batches on and every count alike; fills `out`.
  bool drift_shifts(SteadySnapshot& s0, SteadySnapshot& s1, SteadySnapshot& s2, std::int32_t mb_shift, Drift& out) const;
  // Moves the run, which is at s2, on by `periods` more periods of that drift (s1 -> s2), as
  // simulating them would; returns the ops skipped (0: the periods do not fit the iteration).
  std::int64_t skip_drift(const SteadySnapshot& s1, const SteadySnapshot& s2, const std::vector<std::size_t>& ops,
                          std::int32_t mb_shift, std::int64_t periods, const Drift& drift);

  // The decisions between two ranks' times taken by the ops run since the last cut, recorded
  // while record_margins_: an op of rank `a` whose input from rank `b` came `margin` before its
  // rank was free (a negative margin: the input came later, and the op waited for it), or an
  // overlapped pair whose first input (from rank `a`) came `margin` after its second's (from `b`).
  // When the ranks' clocks move on by different periods (rank_shifts), each margin moves by the
  // difference per period; the decision holds while its margin keeps its sign.
  struct Margin {
    std::int32_t a, b;
    std::int64_t margin;
    bool pair;
  };
  [[gnu::always_inline]] void note_margin(std::int32_t a, std::int32_t b, std::int64_t margin, bool pair) {
    if (a != b) margins_.push_back({a, b, margin, pair});
  }
  // The decisions of rank r's op `o` (chunk g, its rank's op i), its rank free at `free`.
  void note_margins(std::int32_t r, std::size_t i, const ScheduleOp& o, std::int32_t g, std::int64_t free);
  // How many more periods of per-rank shifts `ns` keep every decision in margins_ on its side
  // (INT64_MAX: no decision between ranks that move apart); 0 when one is on its edge, or the
  // input of an op that waited moves apart from its rank.
  std::int64_t margin_cycles(const std::vector<std::int64_t>& ns) const;
  // The rank whose op writes the input of an op of `kind` of chunk g (g's own rank: the loss,
  // a W's B; -1: none, a first chunk's forward input, there at t = 0).
  std::int32_t input_rank(OpKind kind, std::int32_t g) const {
    const auto at = static_cast<std::size_t>(g);
    if (kind == OpKind::forward) return g > 0 && g != second_start_ ? rank_of_[at - 1] : -1;
    if (kind == OpKind::backward && g + 1 < stages_ && g + 1 != second_start_) return rank_of_[at + 1];
    return rank_of_[at];
  }
  // Kept per thread between runs with the other arrays (allocated per run, they were ~400 page
  // faults an estimate). DedicatedRun's lean path keeps its decisions apart, by LeanOp.
  std::vector<Margin> margins_;
  bool record_margins_ = false;

  const ScheduleTable& t_;
  ScheduleRows own_rows_;     // the table's lists, when no rows were given
  const ScheduleRows* rows_;  // what the run reads ops from (ensured before it reads: dedicated_run.h)
  const SimulationInput& in_;
  NsCosts costs_;
  std::int32_t m_, stages_;
  bool keep_;  // spans and names are built
  // DualPipe's second pipeline starts at this chunk (two_pipelines); -1: one pipeline.
  std::int32_t second_start_;
  // Per (global chunk, micro-batch) (pair()), in one plane each, indexed as the snapshot's
  // pending windows (`which`): when F's input arrived (kFwdReady), B's output gradient arrived
  // (kBwdReady), B ended (kBDone; only where Ws read it, split_backward: else no plane). A
  // backward needs no mark that its forward ran: its gradient comes from the next chunk's
  // backward, which ran after that chunk's forward, which needed this one's output (and a last
  // chunk's "gradient" is its own loss, written when its forward ends), so a known kBwdReady
  // means the forward has run, whatever the table. Planes, not the three times of a pair side
  // by side: an op reads one time and writes the same kind of time of the next micro-batch's op
  // in the chunk or a neighbour's, so a cache line holds 8 times an op loop reads in turn
  // instead of 2.7 (the loads of these times were a quarter of a 64-stage run's op loop, perf).
  static constexpr std::size_t kFwdReady = 0, kBwdReady = 1, kBDone = 2;
  std::vector<std::int64_t> times_;
  std::size_t plane_ = 0;  // times a plane: stages x m
  std::int64_t* plane(std::size_t which) { return times_.data() + which * plane_; }
  const std::int64_t* plane(std::size_t which) const { return times_.data() + which * plane_; }
  std::int64_t& time(std::size_t which, std::size_t k) { return times_[which * plane_ + k]; }
  std::int64_t time(std::size_t which, std::size_t k) const { return times_[which * plane_ + k]; }
  // The micro-batches whose pair times are set up (unknown, the first chunk's inputs 0) in every
  // chunk: sorted disjoint ranges [begin, end). All of them from the start, but in a run of a
  // sparse table (ScheduleRows) without spans, which sets up those the ops it may run reach, and
  // those a skip writes to (ensure_times): it skips most micro-batches, and setting up all of
  // them was 13 % of a 64-stage interleaved estimate. Micro-batch indices held in Intervals, so
  // that merge_intervals (interval_set.h) keeps them a union.
  std::vector<Interval> times_ready_;
  void ensure_times(std::int32_t begin, std::int32_t end);
  // Per rank: next op, end of its last op, start of its last op, its compute time, when its
  // reductions end, when its optimizer step started, when its iteration ends.
  std::vector<std::size_t> next_;
  std::vector<std::int64_t> free_, prev_start_, busy_, reduce_end_, step_start_, end_;
  // Per (rank, local chunk), index r * v + c: positions of its first F, first B, last B/W op.
  std::vector<std::int64_t> first_f_, first_b_, last_bwd_;
  std::vector<std::int32_t> rank_of_;  // per global chunk: ScheduleTable::rank_of without its division
  std::vector<std::int32_t> global_of_;  // per (rank, local chunk), r * v + c: its global chunk
  std::array<std::size_t, 3> shape_index_;
  std::vector<CommLane> lanes_;
  std::vector<RankActivity> activity_;        // per rank, for the bubble (dedicated processors)
  // The first rank's stretches without work between its ops (whatever they face: its gaps above
  // leave out those no collective can fill, as a sum) and its pipeline sends, listed as it runs
  // (dedicated processors; the steady state's skip repeats them as it repeats the gaps): where
  // its sends run while it does no work, the breakdown's exposed PP time (exposed_first_sends()).
  std::vector<Interval> first_idle_, first_sends_;
  // The first rank's send time while it does no work: not under its ops (which hold its compute
  // and, on the lane its sends share, its collectives) nor under its optimizer step, from the lists
  // above or, with spans kept, from its spans (the shared model records no lists). The timeline
  // rule of rank_breakdown() (timeline_metrics.h) for the sends of a predicted timeline.
  std::int64_t exposed_first_sends();
  std::vector<std::int64_t> collective_end_;  // per rank: the latest end of its collectives so far
  std::vector<std::int32_t> ran_;             // per (global chunk, kind): ops run (for take_snapshot)
  std::int64_t skipped_ops_ = 0;              // by skip_periods
  // A V-shaped table that stands for DualPipe's lower half (run_simulation): the forward from
  // chunk turn_chunk_ to the next and the backward from the next back to it stay on one rank here
  // but cross to the upper half in DualPipe, so they pay their send on the lane. -1: none.
  std::int32_t turn_chunk_ = -1;
  Timeline tl_;

 private:
  [[gnu::noinline]] std::int32_t intern_op_name(int slot, char letter, const char* prefix, std::int32_t g,
                                                std::int32_t mb);
  [[gnu::noinline]] void draw_overlapped_spans(std::int32_t r, const ScheduleOp& o, std::int32_t g, std::size_t first_span);
  // The first of the p overlapped-communication tracks (rank r's is this + r); -1: none, when
  // spans are not kept or no op has overlapped segments.
  std::int32_t overlapped_tracks_ = -1;
  std::int32_t tp_overlapped_tracks_ = -1;  // TP's hidden collectives, when others are hidden too
  void reduce(std::int32_t r, std::int32_t g, std::int64_t start, std::int64_t end);
  std::int32_t dp_name(std::int32_t g);
  void swap_arrays();
  std::vector<SteadySnapshot> snapshots_;  // snapshots(); swapped with the thread's (swap_arrays)

  std::vector<std::int32_t> names_;
  std::unordered_map<std::string, std::int32_t> other_names_;
  std::vector<std::int32_t> label_ids_;  // name ids of SimulationInput::labels, -1 until used
};

// The per-op steps, inline: they run once per op of every simulation.
inline std::int64_t IterationEngine::communicate(std::int32_t r, std::int64_t issue, std::int64_t ns, SpanKind kind,
                                          std::int32_t name, std::int32_t g, std::int32_t mb, double bytes) {
  if (ns <= 0) return issue;
  const auto ri = static_cast<std::size_t>(r);
  const std::int64_t start = lanes_[ri].place(issue, ns);
  if (kind == SpanKind::collective) {
    activity_[ri].collectives.push_back({start, start + ns});
    collective_end_[ri] = std::max(collective_end_[ri], start + ns);
  } else if (kind == SpanKind::send && r == 0) {
    first_sends_.push_back({start, start + ns});
  }
  if (!keep_) return start + ns;
  Span s = span(start, ns, NsSegment{Lane::communication, Phase::communication, ns, 0, bytes, -1}, name, g, mb);
  s.kind = kind;
  comm_track(r).spans.push_back(s);
  return start + ns;
}

[[gnu::always_inline]] inline std::int64_t IterationEngine::gather_before(std::int32_t r, const ScheduleOp& o, std::int32_t g, std::int64_t earliest) {
  const NsChunkCost& c = cost(g);
  if (c.param_gather <= 0) return earliest;
  const auto ri = static_cast<std::size_t>(r);
  const auto i = static_cast<std::int64_t>(next_[ri]);
  const std::size_t ci = ri * static_cast<std::size_t>(t_.v) + static_cast<std::size_t>(o.chunk);
  if (first_f_[ci] != i && first_b_[ci] != i) return earliest;
  const bool fwd = o.kind == OpKind::forward;
  const std::int32_t name = keep_ ? other_name((fwd ? "gather F" : "gather B") + std::to_string(g)) : -1;
  const std::int64_t issue = !c.param_prefetch ? earliest : (i == 0 ? 0 : prev_start_[ri]);
  return std::max(earliest, communicate(r, issue, c.param_gather, SpanKind::collective, name, g, -1));
}

[[gnu::always_inline]] inline std::int32_t IterationEngine::op_finished(std::int32_t r, const ScheduleOp& o, std::int32_t g, std::int64_t start,
                                          std::int64_t end) {
  const auto ri = static_cast<std::size_t>(r);
  const auto i = static_cast<std::int64_t>(next_[ri]);
  const std::int32_t mb = o.micro_batch;
  const std::size_t k = pair(g, mb);
  const NsChunkCost& c = cost(g);
  prev_start_[ri] = start;
  free_[ri] = end;
  ++next_[ri];
  ++ran_[static_cast<std::size_t>(g) * 3 + static_cast<std::size_t>(o.kind)];
  std::int32_t to = -1;
  if (o.kind == OpKind::forward) {
    if (g + 1 < stages_ && g + 1 != second_start_) {
      to = rank_of_[static_cast<std::size_t>(g) + 1];
      time(kFwdReady, pair(g + 1, mb)) =
          to == r && g != turn_chunk_ ? end
                                      : communicate(r, end, c.send_activation, SpanKind::send, op_name(4, 'F', "send ", g, mb), g, mb);
    } else {
      time(kBwdReady, k) = end;  // the loss: the last chunk's backward needs only its own forward
    }
  } else if (o.kind == OpKind::backward) {
    if (t_.split_backward) time(kBDone, k) = end;
    if (g > 0 && g != second_start_) {
      to = rank_of_[static_cast<std::size_t>(g) - 1];
      time(kBwdReady, pair(g - 1, mb)) =
          to == r && g - 1 != turn_chunk_
              ? end
              : communicate(r, end, c.send_gradient, SpanKind::send, op_name(5, 'B', "send ", g, mb), g, mb);
    }
  }
  const std::size_t ci = ri * static_cast<std::size_t>(t_.v) + static_cast<std::size_t>(o.chunk);
  if (in_.dp_issue == DpReduceIssue::per_chunk && last_bwd_[ci] == i) reduce(r, g, start, end);
  return to;
}

}  // namespace plansight::estimator
