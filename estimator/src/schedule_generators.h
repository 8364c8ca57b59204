// Private to the estimator: the generators of per-rank op orders for GPipe, 1F1B, interleaved
// 1F1B, ZB-H1, DualPipeV and DualPipe (make_schedule, pipeline_schedule.h, cites the schedules).
// Each is written from the paper's description (and, for the interleaved order, from reading
// Megatron-LM's schedules.py, for DualPipeV from reading DeepSeek-AI's dualpipev.py); no code is
// copied from any of them.
//
// A generator writes into a sink: a list (ListSink, make_schedule's tables) or an array that
// may leave out the middle of the rank's steady loop (schedule_rows.h's sparse tables). Each
// steady loop repeats itself one period on, micro-batches later: its iterations from one period
// after a base iteration to one period before the loop's end are then the base period's ops
// moved on, and a sparse sink leaves them unwritten (SteadyLoop).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "plansight/estimator/pipeline_schedule.h"

// The generators' small lambdas are inlined into their loops: left to the compiler, DualPipeV's
// backward was a call per op and its table took 75 % longer to make.
#define PLANSIGHT_INLINE_LAMBDA __attribute__((always_inline))

namespace plansight::estimator::generators {

inline ScheduleOp op(OpKind kind, std::int32_t chunk, std::int32_t micro_batch) {
  return ScheduleOp{kind, chunk, micro_batch};
}

// A generator's steady loop as a sink sees it: `iterations` iterations of `ops_per_iteration`
// ops each, starting at op `first_op` of the rank; from iteration `base` on, iteration i + per
// period is iteration i `shift` micro-batches later (per_period 0: no such claim).
struct SteadyLoop {
  std::size_t first_op = 0, iterations = 0, base = 0, per_period = 0, ops_per_iteration = 0;
  std::int32_t shift = 0;
};
// The iterations [from, to) of a steady loop the sink leaves out (from == to: none).
struct LeftOut {
  std::size_t from = 0, to = 0;
};

// Ops of each rank's list: every schedule's lists are equally long.
constexpr std::size_t ops_per_rank(PipelineSchedule kind, std::int64_t v, std::int64_t m) {
  switch (kind) {
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b:
      return static_cast<std::size_t>(2 * m);
    case PipelineSchedule::interleaved:
      return static_cast<std::size_t>(2 * v * m);
    case PipelineSchedule::zb_h1:
    case PipelineSchedule::dualpipe:
      return static_cast<std::size_t>(3 * m);
    case PipelineSchedule::dualpipev:
      return static_cast<std::size_t>(6 * m);
  }
  return 0;
}

// make_schedule's sink: every op, into a list of the rank's length (ops_per_rank), written through
// a pointer (appending to the list reloaded and stored its end for every op).
struct ListSink {
  static constexpr bool kLeavesOut = false;
  explicit ListSink(std::size_t length) : ops(length), out(ops.data()) {}
  std::vector<ScheduleOp> ops;
  ScheduleOp* out;
  std::size_t n = 0;
  void put(ScheduleOp o) { out[n++] = o; }
  ScheduleOp& back() { return out[n - 1]; }
  std::size_t size() const { return n; }
  LeftOut steady(const SteadyLoop&) { return {}; }
  void skip(std::size_t) {}
};

// Runs `body(i)` for the steady loop's iterations but those the sink leaves out; `skipped(k)`
// moves the generator's counters on by k iterations when it does.
template <class Sink, class Body, class Skipped>
[[gnu::always_inline]] inline void steady_loop(Sink& sink, const SteadyLoop& loop, Body body, Skipped skipped) {
  if constexpr (!Sink::kLeavesOut) {
    for (std::size_t i = 0; i < loop.iterations; ++i) body(i);
    return;
  }
  const LeftOut out = sink.steady(loop);
  for (std::size_t i = 0; i < loop.iterations; ++i) {
    if (i == out.from && out.to > out.from) {
      sink.skip((out.to - out.from) * loop.ops_per_iteration);
      skipped(out.to - out.from);
      i = out.to;
      if (i >= loop.iterations) break;
    }
    body(i);
  }
}

// GPipe (Huang et al. 2019, Sec. 2.2): forward every micro-batch, then backward every micro-batch.
// The order of the backward micro-batches does not change the bubble; ascending keeps the probe's
// data order simple.
template <class Sink>
void gpipe_rank(Sink& sink, std::int32_t m) {
  Sink ops = std::move(sink);  // a local: through the reference every op stored the sink's position
  for (std::int32_t i = 0; i < m; ++i) ops.put(op(OpKind::forward, 0, i));
  for (std::int32_t i = 0; i < m; ++i) ops.put(op(OpKind::backward, 0, i));
  sink = std::move(ops);
}

// 1F1B / PipeDream-Flush (Narayanan et al. 2021, Sec. 2.2.1): rank r runs p-r-1 warm-up forwards
// so that the last rank can start its first backward as soon as its first forward is done, then
// alternates F and B (at most p-r micro-batches stored), then drains the remaining backwards.
template <class Sink>
void one_f_one_b_rank(Sink& sink, std::int32_t p, std::int32_t r, std::int32_t m) {
  Sink ops = std::move(sink);  // a local: through the reference every op stored the sink's position
  const std::int32_t warmup = std::min(p - r - 1, m);
  for (std::int32_t i = 0; i < warmup; ++i) ops.put(op(OpKind::forward, 0, i));
  const auto n = static_cast<std::size_t>(m - warmup);
  steady_loop(ops, SteadyLoop{ops.size(), n, 0, 1, 2, 1}, [&](std::size_t k) PLANSIGHT_INLINE_LAMBDA {
    const auto i = static_cast<std::int32_t>(k);
    ops.put(op(OpKind::forward, 0, warmup + i));
    ops.put(op(OpKind::backward, 0, i));
  }, [](std::size_t) {});
  for (std::int32_t i = m - warmup; i < m; ++i) ops.put(op(OpKind::backward, 0, i));
  sink = std::move(ops);
}

// ZB-H1 (Qi et al. 2023, Sec. 2.1 and Fig. 3 top). The backward is split into B (input gradient,
// on the critical path between stages) and W (weight gradient, needed only by the optimizer).
// Rank r follows 1F1B's warm-up of p-r-1 forwards, but keeps up to r W passes pending: its first r
// steady-state pairs are F,B without W, afterwards each B is followed by the oldest pending W, and
// the r deferred Ws run last, in the drain where 1F1B idles. Every rank then holds at most p
// micro-batches (F done, W not yet done), 1F1B's peak, and with T_W <= T_B the bubble shrinks from
// (p-1)(T_F+T_B+T_W) to (p-1)(T_F+T_B-T_W) (the paper's Sec. 2 comparison of 1F1B with its
// handcrafted schedules; pipeline_simulator_test checks it).
template <class Sink>
void zb_h1_rank(Sink& sink, std::int32_t p, std::int32_t r, std::int32_t m) {
  Sink ops = std::move(sink);  // a local: through the reference every op stored the sink's position
  const std::int32_t warmup = std::min(p - r - 1, m);
  const std::int32_t deferred = r;
  std::int32_t next_f = 0, next_b = 0, next_w = 0;
  auto backward_then_maybe_w = [&]() PLANSIGHT_INLINE_LAMBDA {
    ops.put(op(OpKind::backward, 0, next_b++));
    if (next_b - next_w > deferred) ops.put(op(OpKind::weight_grad, 0, next_w++));
  };
  while (next_f < warmup) ops.put(op(OpKind::forward, 0, next_f++));
  // The first r iterations defer their W (two ops each), every later one runs one (three).
  const std::int32_t pairs = std::min(m - warmup, deferred);
  for (std::int32_t i = 0; i < pairs; ++i) {
    ops.put(op(OpKind::forward, 0, next_f++));
    backward_then_maybe_w();
  }
  const auto n = static_cast<std::size_t>(m - next_f);
  steady_loop(ops, SteadyLoop{ops.size(), n, 0, 1, 3, 1}, [&](std::size_t) PLANSIGHT_INLINE_LAMBDA {
    ops.put(op(OpKind::forward, 0, next_f++));
    backward_then_maybe_w();
  }, [&](std::size_t k) {
    const auto moved = static_cast<std::int32_t>(k);
    next_f += moved, next_b += moved, next_w += moved;
  });
  while (next_b < m) backward_then_maybe_w();
  while (next_w < m) ops.put(op(OpKind::weight_grad, 0, next_w++));
  sink = std::move(ops);
}

// Interleaved 1F1B (Narayanan et al. 2021, Sec. 2.2.2) in Megatron-LM's order. Forward number k
// (0 <= k < m*v) of a rank runs the (micro-batch, chunk) at position k of a table built group by
// group: for each group of `group` consecutive micro-batches, chunk 0 runs them all, then chunk 1,
// and so on (the last group takes the remaining micro-batches). Backward number k runs the same
// micro-batch on chunk v-1-c. Rank r runs (p-r-1)*2 + (v-1)*group warm-up forwards (capped at
// m*v), then alternates forward k+warmup and backward k, then drains the remaining backwards.
// The order of an interleaved rank's forwards (above), the same on every rank: built once per table.
inline std::vector<ScheduleOp> interleaved_forwards(std::int32_t v, std::int32_t m, std::int32_t group) {
  std::vector<ScheduleOp> table;
  table.reserve(static_cast<std::size_t>(m) * v);
  for (std::int32_t first = 0; first < m; first += group) {
    const std::int32_t last = (first + group >= m) ? m : first + group;
    for (std::int32_t c = 0; c < v; ++c) {
      for (std::int32_t i = first; i < last; ++i) table.push_back(op(OpKind::forward, c, i));
    }
  }
  return table;
}

template <class Sink>
void interleaved_rank(Sink& sink, std::int32_t p, std::int32_t v, std::int32_t r, std::int32_t m, std::int32_t group,
                      const std::vector<ScheduleOp>& table) {
  Sink ops = std::move(sink);  // a local: through the reference every op stored the sink's position
  const std::int32_t total = m * v;
  const std::int32_t warmup = std::min((p - r - 1) * 2 + (v - 1) * group, total);
  const ScheduleOp* const forwards = table.data();
  const auto backward = [forwards, v](std::size_t k) PLANSIGHT_INLINE_LAMBDA {
    const ScheduleOp f = forwards[k];
    return op(OpKind::backward, v - 1 - f.chunk, f.micro_batch);
  };
  for (std::int32_t k = 0; k < warmup; ++k) ops.put(forwards[k]);
  // The forwards' table repeats a group (v x group entries) on, `group` micro-batches later,
  // where every group is whole.
  const std::size_t per_period = m % group == 0 ? static_cast<std::size_t>(v) * static_cast<std::size_t>(group) : 0;
  const ScheduleOp* const steady_forwards = forwards + warmup;
  steady_loop(ops, SteadyLoop{ops.size(), static_cast<std::size_t>(total - warmup), 0, per_period, 2, group},
              [&](std::size_t k) PLANSIGHT_INLINE_LAMBDA {
                ops.put(steady_forwards[k]);
                ops.put(backward(k));
              }, [](std::size_t) {});
  for (std::int32_t k = total - warmup; k < total; ++k) ops.put(backward(static_cast<std::size_t>(k)));
  sink = std::move(ops);
}

// DualPipeV (DeepSeek-AI's DualPipe repository, dualpipe/dualpipev.py, DualPipeV.step; the
// "cut-in-half" V-shape of Sea AI Lab). Rank r holds two chunks: local chunk 0 is global chunk r
// (the way down, ranks 0 .. p-1) and local chunk 1 is global chunk 2p-1-r (the way back up), so
// rank 0 holds the first and the last chunk and computes the loss. Each chunk runs its
// micro-batches in order. A backward whose weight gradient is deferred ("zero bubble") leaves its W
// in a first-in first-out queue that later W slots drain; every other backward is followed at once
// by its W, which is the fused backward split in two with the same total time. With m >= 2p
// (the reference asserts it), rank r runs eight phases:
//  1. 2(p-r-1) F0                      5. p-r-1 x (B1, F1 B0)
//  2. r+1 x (F0, F1)                   6. r+1 x (B1, B0), the later half deferring W
//  3. p-r-1 x (B1 deferred, W, F1)     7. p-r-1 x (W, B0 deferred)
//  4. m-2p+r+1 x (F0 B1, F1 B0)        8. r+1 x W
// "F0 B1" is the reference's overlapped forward-backward pair (ScheduleOp::pairs_with_next): it
// starts when both inputs are there and runs here as F then B.
template <class Sink>
void dualpipev_rank(Sink& sink, std::int32_t p, std::int32_t r, std::int32_t m) {
  Sink ops = std::move(sink);  // a local: through the reference every op stored the sink's position
  std::int32_t next_f[2] = {0, 0}, next_b[2] = {0, 0};
  std::vector<ScheduleOp> deferred;  // W queue, oldest first
  std::size_t deferred_head = 0;
  auto forward = [&](std::int32_t chunk) PLANSIGHT_INLINE_LAMBDA { ops.put(op(OpKind::forward, chunk, next_f[chunk]++)); };
  auto backward = [&](std::int32_t chunk, bool defer_w) PLANSIGHT_INLINE_LAMBDA {
    const std::int32_t mb = next_b[chunk]++;
    ops.put(op(OpKind::backward, chunk, mb));
    if (defer_w) {
      deferred.push_back(op(OpKind::weight_grad, chunk, mb));
    } else {
      ops.put(op(OpKind::weight_grad, chunk, mb));
    }
  };
  auto weight = [&]() PLANSIGHT_INLINE_LAMBDA { ops.put(deferred[deferred_head++]); };
  const std::int32_t down = p - r - 1, up = r + 1;
  for (std::int32_t i = 0; i < 2 * down; ++i) forward(0);
  // The reference receives ahead and waits for every posted receive before it computes: F1 of
  // phase 2 waits for the next F0's input, and phase 3's W for the F1 after it.
  for (std::int32_t i = 0; i < up; ++i) {
    forward(0), forward(1);
    ops.back().pairs_with_next = i + 1 < up;
  }
  for (std::int32_t i = 0; i < down; ++i) {
    backward(1, true), weight();
    ops.back().pairs_with_next = true;
    forward(1);
  }
  // An overlapped pair: the forward waits for the backward's input too.
  auto pair = [&](std::int32_t f_chunk, std::int32_t b_chunk) PLANSIGHT_INLINE_LAMBDA {
    forward(f_chunk);
    ops.back().pairs_with_next = true;
    backward(b_chunk, false);
  };
  // The main phase: six ops an iteration, each iteration the one before a micro-batch later from
  // the second on (the last rank's first is not overlapped, below).
  const auto main = static_cast<std::size_t>(m - 2 * p + r + 1);
  steady_loop(ops, SteadyLoop{ops.size(), main, 1, 1, 6, 1}, [&](std::size_t i) PLANSIGHT_INLINE_LAMBDA {
    // The reference does not overlap the last rank's first pair (its F0 feeds its own F1).
    if (i == 0 && r == p - 1) {
      forward(0), backward(1, false);
    } else {
      pair(0, 1);
    }
    pair(1, 0);
  }, [&](std::size_t k) {
    const auto moved = static_cast<std::int32_t>(k);
    for (std::int32_t c = 0; c < 2; ++c) next_f[c] += moved, next_b[c] += moved;
  });
  for (std::int32_t i = 0; i < down; ++i) backward(1, false), pair(1, 0);
  for (std::int32_t i = 0; i < up; ++i) {
    // The reference turns deferral on halfway through: odd ranks from this B1, even from this B0.
    const bool half = i >= up / 2;
    backward(1, half && (r % 2 == 1 || i > up / 2));
    backward(0, half);
  }
  for (std::int32_t i = 0; i < down; ++i) weight(), backward(0, true);
  for (std::int32_t i = 0; i < up; ++i) weight();
  sink = std::move(ops);
}

// DualPipe (DeepSeek-AI's DualPipe repository, dualpipe/dualpipe.py, DualPipe.step): the same
// eight phases as DualPipeV, run by each half of the ranks towards the middle. Rank r's
// half-rank h = min(r, p-1-r) plays DualPipeV's rank h of p/2 ranks with m/2 micro-batches per
// direction (its "half_num_chunks"); the middle ranks h = p/2-1 play its last rank (their
// first main-phase pair is not overlapped). Its phase 0 is the pipeline that starts at its own
// end: the first copy (local chunk 0, micro-batches 0 .. m/2-1) on ranks below p/2, the second
// (local chunk 1, micro-batches m/2 .. m-1) above. A whole list only.
inline std::vector<ScheduleOp> dualpipe_rank(std::int32_t p, std::int32_t r, std::int32_t m) {
  const std::int32_t half = p / 2;
  const bool lower = r < half;
  ListSink sink(ops_per_rank(PipelineSchedule::dualpipev, 2, m / 2));
  dualpipev_rank(sink, half, lower ? r : p - 1 - r, m / 2);
  std::vector<ScheduleOp> ops = std::move(sink.ops);
  for (ScheduleOp& o : ops) {
    o.chunk = lower ? o.chunk : 1 - o.chunk;
    if (o.chunk == 1) o.micro_batch += m / 2;
  }
  return ops;
}

// Rank r's ops of a table of `kind` (all but DualPipe, whose list is DualPipeV's remapped:
// dualpipe_rank) into `sink`; `forwards`: interleaved_forwards' for the interleaved order.
template <class Sink>
void write_rank(Sink& sink, PipelineSchedule kind, std::int32_t p, std::int32_t v, std::int32_t r, std::int32_t m,
                std::int32_t group, const std::vector<ScheduleOp>& forwards) {
  switch (kind) {
    case PipelineSchedule::gpipe:
      gpipe_rank(sink, m);
      break;
    case PipelineSchedule::one_f_one_b:
      one_f_one_b_rank(sink, p, r, m);
      break;
    case PipelineSchedule::zb_h1:
      zb_h1_rank(sink, p, r, m);
      break;
    case PipelineSchedule::interleaved:
      interleaved_rank(sink, p, v, r, m, group, forwards);
      break;
    case PipelineSchedule::dualpipev:
      dualpipev_rank(sink, p, r, m);
      break;
    case PipelineSchedule::dualpipe:
      break;
  }
}

// Tables of at least this many ops (two per chunk-micro-batch) are made on two threads.
inline constexpr std::int64_t kTwoThreadTableOps = 65536;
// make(r) for every rank r < p, on the caller's thread and the estimator's side thread when
// `two_threads` and the table is long (kTwoThreadTableOps; pipeline_schedule.cpp says why).
void make_ranks(std::int32_t p, std::int64_t chunk_micro_batches, bool two_threads,
                const std::function<void(std::int32_t)>& make);

// A table of `kind` with p, v, m and split_backward set, p empty lists and no runs yet.
ScheduleTable empty_table(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m);
// The period (ops) and shift (micro-batches) of the repeating run make_schedule records for a rank
// of n ops (ScheduleTable::repeating): a micro-batch (each of DualPipe's pipelines sees m/2), the
// interleaved order's group. Period 0: none (GPipe, whose halves the simulation searches apart).
struct RunPeriod {
  std::size_t period = 0;
  std::int32_t shift = 0;
};
RunPeriod run_period(const ScheduleTable& table, std::size_t n, std::int32_t group);

// make_schedule's checks of its arguments (pipeline_schedule.cpp); `group`: the interleaved
// order's micro-batch group, p when the options leave it 0.
std::vector<Diagnostic> validate_schedule(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                                          std::int64_t group);

}  // namespace plansight::estimator::generators
