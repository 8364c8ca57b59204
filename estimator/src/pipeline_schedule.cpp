// Generators of per-rank op orders for GPipe, 1F1B, interleaved 1F1B, ZB-H1 and DualPipeV, their
// validation, and the in-flight walk. Each generator is written from the paper's description (and,
// for the interleaved order, from reading Megatron-LM's schedules.py, for DualPipeV from reading
// DeepSeek-AI's dualpipev.py); no code is copied from any of them.
#include "plansight/estimator/pipeline_schedule.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "side_thread.h"
#include "simulation_costs.h"
#include "steady_state.h"

namespace plansight::estimator {
namespace {

// Upper bound on ops per table, so that a typo (m = 10^9) is an error, not an allocation failure.
constexpr std::int64_t kMaxOps = 50'000'000;

ScheduleOp op(OpKind kind, std::int32_t chunk, std::int32_t micro_batch) {
  return ScheduleOp{kind, chunk, micro_batch};
}

// GPipe (Huang et al. 2019, Sec. 2.2): forward every micro-batch, then backward every micro-batch.
// The order of the backward micro-batches does not change the bubble; ascending keeps the probe's
// data order simple.
std::vector<ScheduleOp> gpipe_rank(std::int32_t m) {
  std::vector<ScheduleOp> ops;
  ops.reserve(2 * static_cast<std::size_t>(m));
  for (std::int32_t i = 0; i < m; ++i) ops.push_back(op(OpKind::forward, 0, i));
  for (std::int32_t i = 0; i < m; ++i) ops.push_back(op(OpKind::backward, 0, i));
  return ops;
}

// 1F1B / PipeDream-Flush (Narayanan et al. 2021, Sec. 2.2.1): rank r runs p-r-1 warm-up forwards
// so that the last rank can start its first backward as soon as its first forward is done, then
// alternates F and B (at most p-r micro-batches stored), then drains the remaining backwards.
std::vector<ScheduleOp> one_f_one_b_rank(std::int32_t p, std::int32_t r, std::int32_t m) {
  const std::int32_t warmup = std::min(p - r - 1, m);
  std::vector<ScheduleOp> ops;
  ops.reserve(2 * static_cast<std::size_t>(m));
  for (std::int32_t i = 0; i < warmup; ++i) ops.push_back(op(OpKind::forward, 0, i));
  for (std::int32_t i = 0; i < m - warmup; ++i) {
    ops.push_back(op(OpKind::forward, 0, warmup + i));
    ops.push_back(op(OpKind::backward, 0, i));
  }
  for (std::int32_t i = m - warmup; i < m; ++i) ops.push_back(op(OpKind::backward, 0, i));
  return ops;
}

// ZB-H1 (Qi et al. 2023, Sec. 2.1 and Fig. 3 top). The backward is split into B (input gradient,
// on the critical path between stages) and W (weight gradient, needed only by the optimizer).
// Rank r follows 1F1B's warm-up of p-r-1 forwards, but keeps up to r W passes pending: its first r
// steady-state pairs are F,B without W, afterwards each B is followed by the oldest pending W, and
// the r deferred Ws run last, in the drain where 1F1B idles. Every rank then holds at most p
// micro-batches (F done, W not yet done), 1F1B's peak, and with T_W <= T_B the bubble shrinks from
// (p-1)(T_F+T_B+T_W) to (p-1)(T_F+T_B-T_W) (the paper's Sec. 2 comparison of 1F1B with its
// handcrafted schedules; pipeline_simulator_test checks it).
std::vector<ScheduleOp> zb_h1_rank(std::int32_t p, std::int32_t r, std::int32_t m) {
  const std::int32_t warmup = std::min(p - r - 1, m);
  const std::int32_t deferred = r;
  std::vector<ScheduleOp> ops;
  ops.reserve(3 * static_cast<std::size_t>(m));
  std::int32_t next_f = 0, next_b = 0, next_w = 0;
  auto backward_then_maybe_w = [&] {
    ops.push_back(op(OpKind::backward, 0, next_b++));
    if (next_b - next_w > deferred) ops.push_back(op(OpKind::weight_grad, 0, next_w++));
  };
  while (next_f < warmup) ops.push_back(op(OpKind::forward, 0, next_f++));
  while (next_f < m) {
    ops.push_back(op(OpKind::forward, 0, next_f++));
    backward_then_maybe_w();
  }
  while (next_b < m) backward_then_maybe_w();
  while (next_w < m) ops.push_back(op(OpKind::weight_grad, 0, next_w++));
  return ops;
}

// Interleaved 1F1B (Narayanan et al. 2021, Sec. 2.2.2) in Megatron-LM's order. Forward number k
// (0 <= k < m*v) of a rank runs the (micro-batch, chunk) at position k of a table built group by
// group: for each group of `group` consecutive micro-batches, chunk 0 runs them all, then chunk 1,
// and so on (the last group takes the remaining micro-batches). Backward number k runs the same
// micro-batch on chunk v-1-c. Rank r runs (p-r-1)*2 + (v-1)*group warm-up forwards (capped at
// m*v), then alternates forward k+warmup and backward k, then drains the remaining backwards.
// The order of an interleaved rank's forwards (above), the same on every rank: built once per table.
std::vector<ScheduleOp> interleaved_forwards(std::int32_t v, std::int32_t m, std::int32_t group) {
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

std::vector<ScheduleOp> interleaved_rank(std::int32_t p, std::int32_t v, std::int32_t r, std::int32_t m,
                                         std::int32_t group, const std::vector<ScheduleOp>& table) {
  const std::int32_t total = m * v;
  const std::int32_t warmup = std::min((p - r - 1) * 2 + (v - 1) * group, total);
  auto backward = [&](std::int32_t k) {
    const ScheduleOp& f = table[static_cast<std::size_t>(k)];
    return op(OpKind::backward, v - 1 - f.chunk, f.micro_batch);
  };
  std::vector<ScheduleOp> ops;
  ops.reserve(2 * static_cast<std::size_t>(total));
  for (std::int32_t k = 0; k < warmup; ++k) ops.push_back(table[static_cast<std::size_t>(k)]);
  for (std::int32_t k = 0; k < total - warmup; ++k) {
    ops.push_back(table[static_cast<std::size_t>(k + warmup)]);
    ops.push_back(backward(k));
  }
  for (std::int32_t k = total - warmup; k < total; ++k) ops.push_back(backward(k));
  return ops;
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
std::vector<ScheduleOp> dualpipev_rank(std::int32_t p, std::int32_t r, std::int32_t m) {
  std::vector<ScheduleOp> ops;
  ops.reserve(6 * static_cast<std::size_t>(m));
  std::int32_t next_f[2] = {0, 0}, next_b[2] = {0, 0};
  std::vector<ScheduleOp> deferred;  // W queue, oldest first
  std::size_t deferred_head = 0;
  auto forward = [&](std::int32_t chunk) { ops.push_back(op(OpKind::forward, chunk, next_f[chunk]++)); };
  auto backward = [&](std::int32_t chunk, bool defer_w) {
    const std::int32_t mb = next_b[chunk]++;
    ops.push_back(op(OpKind::backward, chunk, mb));
    (defer_w ? deferred : ops).push_back(op(OpKind::weight_grad, chunk, mb));
  };
  auto weight = [&] { ops.push_back(deferred[deferred_head++]); };
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
  auto pair = [&](std::int32_t f_chunk, std::int32_t b_chunk) {
    forward(f_chunk);
    ops.back().pairs_with_next = true;
    backward(b_chunk, false);
  };
  for (std::int32_t i = 0; i < m - 2 * p + r + 1; ++i) {
    // The reference does not overlap the last rank's first pair (its F0 feeds its own F1).
    if (i == 0 && r == p - 1) {
      forward(0), backward(1, false);
    } else {
      pair(0, 1);
    }
    pair(1, 0);
  }
  for (std::int32_t i = 0; i < down; ++i) backward(1, false), pair(1, 0);
  for (std::int32_t i = 0; i < up; ++i) {
    // The reference turns deferral on halfway through: odd ranks from this B1, even from this B0.
    const bool half = i >= up / 2;
    backward(1, half && (r % 2 == 1 || i > up / 2));
    backward(0, half);
  }
  for (std::int32_t i = 0; i < down; ++i) weight(), backward(0, true);
  for (std::int32_t i = 0; i < up; ++i) weight();
  return ops;
}

// DualPipe (DeepSeek-AI's DualPipe repository, dualpipe/dualpipe.py, DualPipe.step): the same
// eight phases as DualPipeV, run by each half of the ranks towards the middle. Rank r's
// half-rank h = min(r, p-1-r) plays DualPipeV's rank h of p/2 ranks with m/2 micro-batches per
// direction (its "half_num_chunks"); the middle ranks h = p/2-1 play its last rank (their
// first main-phase pair is not overlapped). Its phase 0 is the pipeline that starts at its own
// end: the first copy (local chunk 0, micro-batches 0 .. m/2-1) on ranks below p/2, the second
// (local chunk 1, micro-batches m/2 .. m-1) above.
std::vector<ScheduleOp> dualpipe_rank(std::int32_t p, std::int32_t r, std::int32_t m) {
  const std::int32_t half = p / 2;
  const bool lower = r < half;
  std::vector<ScheduleOp> ops = dualpipev_rank(half, lower ? r : p - 1 - r, m / 2);
  for (ScheduleOp& o : ops) {
    o.chunk = lower ? o.chunk : 1 - o.chunk;
    if (o.chunk == 1) o.micro_batch += m / 2;
  }
  return ops;
}

std::string num(std::int64_t value) { return std::to_string(value); }

std::vector<Diagnostic> validate(PipelineSchedule kind, std::int64_t p, std::int64_t v,
                                 std::int64_t m, std::int64_t group) {
  std::vector<Diagnostic> errors;
  const std::string name(to_string(kind));
  if (p < 1) errors.push_back(make_error("layout.pp", "pp = " + num(p) + "; it must be >= 1"));
  if (v < 1) errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + "; it must be >= 1"));
  if (v > kMaxChunksPerRank) {
    errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + "; at most " + num(kMaxChunksPerRank) +
                                                  " model chunks per rank can be scheduled"));
  }
  if (m < 1) {
    errors.push_back(make_error("training.global_batch",
                                "micro-batches per iteration m = " + num(m) + "; it must be >= 1"));
  }
  if (!errors.empty()) return errors;
  if (p * v * m > kMaxOps / 3) {
    errors.push_back(make_error("training.global_batch", "pp * vpp * m = " + num(p * v * m) +
                                                             " chunk-micro-batches; at most " +
                                                             num(kMaxOps / 3) +
                                                             " can be scheduled"));
    return errors;
  }
  if (kind == PipelineSchedule::dualpipe) {
    // dualpipe.py: DualPipe.step asserts an even number of ranks and num_chunks % 2 == 0 and
    // num_chunks >= 2 * num_ranks; each rank holds two modules.
    if (p % 2 != 0) {
      errors.push_back(make_error("layout.pp", "pp = " + num(p) + " with schedule dualpipe; it must be even "
                                               "(half the ranks feed each direction)"));
    }
    if (v != 2) {
      errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + " with schedule dualpipe; it must be 2 "
                                                "(DualPipe holds one stage of each model copy per rank)"));
    }
    if (m < 2 * p || m % 2 != 0) {
      errors.push_back(make_error("training.global_batch", "dualpipe with pp = " + num(p) + " needs an even m >= 2 * pp = " +
                                                               num(2 * p) + " micro-batches, but m = " + num(m)));
    }
    return errors;
  }
  if (kind == PipelineSchedule::dualpipev) {
    // dualpipev.py: two modules per rank, and DualPipeV.step asserts num_chunks >= 2 * num_ranks.
    if (v != 2) {
      errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + " with schedule dualpipev; it must be 2 "
                                                "(DualPipeV holds two chunks per rank, one each way of its V)"));
    }
    if (m < 2 * p) {
      errors.push_back(make_error("training.global_batch", "dualpipev with pp = " + num(p) + " needs m >= 2 * pp = " +
                                                               num(2 * p) + " micro-batches, but m = " + num(m)));
    }
    return errors;
  }
  if (kind != PipelineSchedule::interleaved) {
    if (v != 1) {
      errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + " with schedule " + name +
                                                    "; it must be 1, or use schedule interleaved"));
    }
    return errors;
  }
  // Interleaving needs several ranks and several chunks per rank (Narayanan et al. 2021, 2.2.2).
  if (p < 2) {
    errors.push_back(make_error("layout.pp", "pp = " + num(p) +
                                                 " with schedule interleaved; it "
                                                 "must be >= 2 (or use one_f_one_b)"));
  }
  if (v < 2) {
    errors.push_back(make_error("layout.vpp", "vpp = " + num(v) +
                                                  " with schedule interleaved; it "
                                                  "must be >= 2 (or use one_f_one_b)"));
  }
  if (!errors.empty()) return errors;
  // Megatron-LM (schedules.py, forward_backward_pipelining_with_interleaving) raises unless
  // p <= group <= m, and unless the last group is empty or has at least p micro-batches.
  if (group < p || group > m) {
    errors.push_back(
        make_error("training.global_batch", "interleaved schedule with pp = " + num(p) +
                                                " and a micro-batch group of " + num(group) +
                                                " needs m >= group >= pp, but m = " + num(m) +
                                                "; use m >= " + num(std::max(p, group))));
  } else if (m % group != 0 && m % group < p) {
    errors.push_back(
        make_error("training.global_batch",
                   "interleaved schedule needs m % group == 0 or m % group >= pp; m = " + num(m) +
                       ", group = " + num(group) + ", pp = " + num(p) +
                       "; with the default group = pp, use m a "
                       "multiple of " +
                       num(p) + " (e.g. " + num((m / group + 1) * group) + ")"));
  }
  return errors;
}

// Tables of at least this many ops are made on two threads (make_schedule).
constexpr std::int64_t kTwoThreadTableOps = 65536;

// Rank r's list of a table whose kind, p, v and m are set.
void make_rank(ScheduleTable& table, std::int32_t r, std::int32_t group, const std::vector<ScheduleOp>& forwards) {
  auto& ops = table.ranks[static_cast<std::size_t>(r)];
  switch (table.kind) {
    case PipelineSchedule::gpipe:
      ops = gpipe_rank(table.m);
      break;
    case PipelineSchedule::one_f_one_b:
      ops = one_f_one_b_rank(table.p, r, table.m);
      break;
    case PipelineSchedule::zb_h1:
      ops = zb_h1_rank(table.p, r, table.m);
      break;
    case PipelineSchedule::interleaved:
      ops = interleaved_rank(table.p, table.v, r, table.m, group, forwards);
      break;
    case PipelineSchedule::dualpipev:
      ops = dualpipev_rank(table.p, r, table.m);
      break;
    case PipelineSchedule::dualpipe:
      ops = dualpipe_rank(table.p, r, table.m);
      break;
  }
  // The run of the steady state, while the list is in cache (ScheduleTable::repeating): a period
  // is a micro-batch (each of DualPipe's pipelines sees m/2), the interleaved order's a group.
  // GPipe's forwards and backwards repeat each in their half, which the simulation searches
  // separately.
  if (table.kind == PipelineSchedule::gpipe) return;
  const std::int32_t micro_batches = two_pipelines(table.kind) ? table.m / 2 : table.m;
  if (micro_batches <= 0 || ops.size() % static_cast<std::size_t>(micro_batches) != 0) return;
  const std::int32_t shift = table.kind == PipelineSchedule::interleaved ? group : 1;
  const std::size_t period = ops.size() / static_cast<std::size_t>(micro_batches) * static_cast<std::size_t>(shift);
  table.repeating[static_cast<std::size_t>(r)] = repeating_run(ops, period, shift);
}

}  // namespace

char op_letter(OpKind kind) {
  switch (kind) {
    case OpKind::forward:
      return 'F';
    case OpKind::backward:
      return 'B';
    case OpKind::weight_grad:
      return 'W';
  }
  return '?';
}

Result<ScheduleTable> make_schedule(PipelineSchedule kind, std::int64_t p, std::int64_t v,
                                    std::int64_t m, ScheduleOptions options) {
  const std::int64_t group = options.microbatch_group > 0 ? options.microbatch_group : p;
  if (auto errors = validate(kind, p, v, m, group); !errors.empty()) return errors;
  ScheduleTable table;
  table.kind = kind;
  table.p = static_cast<std::int32_t>(p);
  table.v = static_cast<std::int32_t>(v);
  table.m = static_cast<std::int32_t>(m);
  table.split_backward = kind == PipelineSchedule::zb_h1 || kind == PipelineSchedule::dualpipev ||
                         kind == PipelineSchedule::dualpipe;
  table.ranks.resize(static_cast<std::size_t>(p));
  table.repeating.resize(static_cast<std::size_t>(p));
  const std::vector<ScheduleOp> forwards = kind == PipelineSchedule::interleaved
                                               ? interleaved_forwards(table.v, table.m, static_cast<std::int32_t>(group))
                                               : std::vector<ScheduleOp>{};
  // A long table is made on two threads (every rank's list is its own): a 64 x 4 x 1024 table of
  // 524,288 ops took 0.55 ms on one, before both its simulations. Each thread takes the next rank
  // left, so the caller's starts at once and the side thread joins when it wakes (28 us on
  // average, bench/results/time-core-cpu.txt), instead of the caller waiting for its half.
  std::atomic<std::int32_t> next_rank{0};
  const auto make_ranks = [&] {
    for (std::int32_t r = next_rank++; r < table.p; r = next_rank++) make_rank(table, r, static_cast<std::int32_t>(group), forwards);
  };
  if (options.two_threads && p >= 2 && 2 * p * v * m >= kTwoThreadTableOps) {
    SideJob other(make_ranks);
    make_ranks();
    other.wait();
  } else {
    make_ranks();
  }
  return table;
}

Result<ScheduleTable> make_dualpipe_lower_half(std::int64_t p, std::int64_t m, ScheduleOptions options) {
  if (auto errors = validate(PipelineSchedule::dualpipe, p, 2, m, p); !errors.empty()) return errors;
  return make_schedule(PipelineSchedule::dualpipev, p / 2, 2, m / 2, options);
}

Result<ScheduleTable> make_schedule(const LayoutSpec& layout, std::int64_t micro_batches,
                                    ScheduleOptions options) {
  return make_schedule(layout.schedule, layout.pp, layout.vpp, micro_batches, options);
}

std::vector<Diagnostic> check_schedule(const ScheduleTable& t) {
  std::vector<Diagnostic> errors;
  if (t.p < 1 || t.v < 1 || t.v > kMaxChunksPerRank || t.m < 1 || t.ranks.size() != static_cast<std::size_t>(t.p)) {
    errors.push_back(make_error("schedule", "table has p = " + num(t.p) + ", v = " + num(t.v) +
                                                ", m = " + num(t.m) + " and " +
                                                num(static_cast<std::int64_t>(t.ranks.size())) +
                                                " rank lists; need p, m >= 1, 1 <= v <= " +
                                                num(kMaxChunksPerRank) + " and p lists"));
    return errors;
  }
  const std::size_t pairs = static_cast<std::size_t>(t.v) * static_cast<std::size_t>(t.m);
  // Per (chunk, micro-batch): position of its F, B and W in the rank's list, -1 until seen.
  std::vector<std::int64_t> seen(3 * pairs);
  for (std::int32_t r = 0; r < t.p; ++r) {
    // Texts are made only for an error: this check runs before every simulation.
    auto field = [r] { return "schedule.ranks[" + num(r) + "]"; };
    std::fill(seen.begin(), seen.end(), -1);
    const auto& ops = t.ranks[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const ScheduleOp& o = ops[i];
      auto what = [&o] {
        return std::string(1, op_letter(o.kind)) + " chunk " + num(o.chunk) + " micro-batch " + num(o.micro_batch);
      };
      if (o.chunk < 0 || o.chunk >= t.v || o.micro_batch < 0 || o.micro_batch >= t.m ||
          !t.passes(t.global_chunk(r, o.chunk), o.micro_batch)) {
        errors.push_back(make_error(field(), "op " + num(static_cast<std::int64_t>(i)) + " (" + what() +
                                                 ") is outside v = " + num(t.v) + ", m = " + num(t.m) +
                                                 (two_pipelines(t.kind) ? " and its pipeline's micro-batches" : "")));
        continue;
      }
      if (o.kind == OpKind::weight_grad && !t.split_backward) {
        errors.push_back(make_error(field(), what() + ": W op in a schedule without split backward"));
        continue;
      }
      const std::size_t pair = static_cast<std::size_t>(o.chunk) * t.m + o.micro_batch;
      const auto k = static_cast<std::size_t>(o.kind);
      if (seen[k * pairs + pair] >= 0) {
        errors.push_back(make_error(field(), what() + " appears twice"));
        continue;
      }
      seen[k * pairs + pair] = static_cast<std::int64_t>(i);
      if (o.kind != OpKind::forward && seen[(k - 1) * pairs + pair] < 0) {
        errors.push_back(make_error(field(), what() + " comes before its " + std::string(1, op_letter(OpKind(k - 1)))));
      }
    }
    if (!ops.empty() && ops.back().pairs_with_next) {
      errors.push_back(make_error(field(), std::string(1, op_letter(ops.back().kind)) + " chunk " + num(ops.back().chunk) +
                                               " micro-batch " + num(ops.back().micro_batch) +
                                               " pairs with the next op, but it is the rank's last"));
    }
    const std::size_t kinds = t.split_backward ? 3 : 2;
    for (std::size_t k = 0; k < kinds; ++k) {
      for (std::size_t pair = 0; pair < pairs; ++pair) {
        if (seen[k * pairs + pair] >= 0) continue;
        const auto chunk = static_cast<std::int32_t>(pair / static_cast<std::size_t>(t.m));
        if (!t.passes(t.global_chunk(r, chunk), static_cast<std::int32_t>(pair % static_cast<std::size_t>(t.m)))) continue;
        errors.push_back(
            make_error(field(), std::string(1, op_letter(OpKind(k))) + " chunk " +
                                  num(static_cast<std::int64_t>(pair / t.m)) + " micro-batch " +
                                  num(static_cast<std::int64_t>(pair % t.m)) + " is missing"));
      }
    }
  }
  return errors;
}

std::vector<std::int32_t> peak_in_flight(const ScheduleTable& t) {
  const OpKind releases = t.split_backward ? OpKind::weight_grad : OpKind::backward;
  std::vector<std::int32_t> peaks;
  peaks.reserve(t.ranks.size());
  for (const auto& ops : t.ranks) {
    std::int32_t now = 0, peak = 0;
    for (const ScheduleOp& o : ops) {
      if (o.kind == OpKind::forward) peak = std::max(peak, ++now);
      if (o.kind == releases) --now;
    }
    peaks.push_back(peak);
  }
  return peaks;
}

std::vector<std::int32_t> in_flight_at_peak(const std::vector<ScheduleOp>& ops, bool split_backward,
                                            const std::vector<double>& chunk_weight) {
  const OpKind releases = split_backward ? OpKind::weight_grad : OpKind::backward;
  std::vector<std::int32_t> now(chunk_weight.size(), 0), at_peak = now;
  double total = 0, peak = 0;
  for (const ScheduleOp& o : ops) {
    const auto c = static_cast<std::size_t>(o.chunk);
    if (c >= now.size()) continue;
    if (o.kind == OpKind::forward) {
      ++now[c];
      total += chunk_weight[c];
      if (total > peak) peak = total, at_peak = now;
    } else if (o.kind == releases) {
      --now[c];
      total -= chunk_weight[c];
    }
  }
  return at_peak;
}

}  // namespace plansight::estimator
