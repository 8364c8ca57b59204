// The steady-state skip (steady_state.h): a run without a timeline that skips periods gives every
// figure of the run that simulates every op (a kept timeline never skips), on every schedule, with
// communication segments, sends, bucketed or final gradient reductions, ZeRO-3 gathers and
// different costs per chunk; and it does skip where a schedule has a long steady state.
// Also: the engine's per-run arrays a thread keeps between runs, and the huge ones it frees.
#include "steady_state.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <string>
#include <thread>
#include <tuple>

#include "drawn_costs.h"
#include "iteration_engine.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "simulation_costs.h"

namespace plansight::estimator {
namespace {

constexpr double kMs = 1e-3;

// Per-chunk costs drawn from `seed`: uneven stages, TP segments on the communication lane,
// sends long enough to queue behind them, gathers and reductions on some seeds.
SimulationInput drawn_input(std::int64_t stages, std::uint32_t seed, bool uniform) {
  SimulationInput in;
  std::uint32_t x = seed;
  auto ms = [&x](double lo, double hi) {
    x = x * 1664525u + 1013904223u;
    return (lo + (hi - lo) * static_cast<double>(x >> 8) / static_cast<double>(1u << 24)) * kMs;
  };
  ChunkCost first;
  for (std::int64_t g = 0; g < stages; ++g) {
    const ChunkCost c = test::drawn_chunk(ms, seed);
    if (g == 0) first = c;
    in.chunks.push_back(uniform ? first : c);
  }
  test::draw_run_settings(in, ms, seed);
  return in;
}

struct Case {
  PipelineSchedule kind;
  std::int64_t p, v, m;
};

// Every schedule the simulator runs, at micro-batch counts with long steady states.
const Case kCases[] = {
    {PipelineSchedule::one_f_one_b, 2, 1, 40},  {PipelineSchedule::one_f_one_b, 4, 1, 64},
    {PipelineSchedule::one_f_one_b, 8, 1, 97},  {PipelineSchedule::interleaved, 2, 2, 40},
    {PipelineSchedule::interleaved, 4, 2, 64},  {PipelineSchedule::interleaved, 4, 3, 96},
    {PipelineSchedule::interleaved, 8, 4, 128}, {PipelineSchedule::zb_h1, 4, 1, 64},
    {PipelineSchedule::zb_h1, 8, 1, 100},       {PipelineSchedule::dualpipev, 4, 2, 64},
    {PipelineSchedule::dualpipev, 8, 2, 96},    {PipelineSchedule::gpipe, 4, 1, 64},
    {PipelineSchedule::dualpipe, 4, 2, 96},     {PipelineSchedule::dualpipe, 8, 2, 160},
};

std::string name(const Case& c, std::uint32_t seed, bool uniform) {
  return std::string(to_string(c.kind)) + " p=" + std::to_string(c.p) + " v=" + std::to_string(c.v) +
         " m=" + std::to_string(c.m) + " seed=" + std::to_string(seed) + (uniform ? " uniform" : " per chunk");
}

// Runs `in` with and without a timeline (a kept timeline never skips) and expects every figure
// equal; returns the ops the run without one skipped.
std::int64_t expect_skip_equals_full_run(const ScheduleTable& table, const SimulationInput& in) {
  SimulationInput full = in;
  full.keep_timeline = true;
  SimulationInput lean = in;
  lean.keep_timeline = false;
  const auto a = simulate(table, full);
  const auto b = simulate(table, lean);
  EXPECT_TRUE(a.ok() && b.ok());
  if (!a.ok() || !b.ok()) return 0;
  EXPECT_EQ(a->skipped_ops, 0);
  test::expect_same_figures(*b, *a);
  return b->skipped_ops;
}

TEST(SteadyState, SkippingGivesEveryFigureOfTheFullRun) {
  int skipped_runs = 0, runs = 0;
  for (const Case& c : kCases) {
    auto table = make_schedule(c.kind, c.p, c.v, c.m);
    ASSERT_TRUE(table.ok()) << table.error_text();
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
      for (bool uniform : {true, false}) {
        SCOPED_TRACE(name(c, seed, uniform));
        ++runs;
        skipped_runs += expect_skip_equals_full_run(*table, drawn_input(c.p * c.v, seed, uniform)) > 0 ? 1 : 0;
      }
    }
  }
  // Not a vacuous equality: most of these runs skip.
  EXPECT_GE(skipped_runs, runs * 3 / 4) << skipped_runs << " of " << runs;
}

TEST(SteadyState, RandomLayoutsGiveEveryFigureOfTheFullRun) {
  // Random schedules (interleaved with Megatron's micro-batch groups too), sizes and costs; a
  // third of the draws makes one chunk much slower, which moves the bottleneck off the ends.
  std::uint32_t x = 12345;
  auto draw = [&x](std::uint32_t n) {
    x = x * 1664525u + 1013904223u;
    return (x >> 8) % n;
  };
  // PLANSIGHT_RANDOM_LAYOUTS=N draws N layouts instead of 120: the stress run after a change to
  // the engine (bench/results/time-core-cpu.txt names the counts run).
  const char* runs_env = std::getenv("PLANSIGHT_RANDOM_LAYOUTS");
  const int runs = runs_env != nullptr && std::atoi(runs_env) > 0 ? std::atoi(runs_env) : 120;
  int skipped_runs = 0;
  for (int run = 0; run < runs; ++run) {
    const auto kind = std::array{PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zb_h1,
                                 PipelineSchedule::dualpipev, PipelineSchedule::dualpipe, PipelineSchedule::gpipe}[draw(6)];
    const bool two_chunks = kind == PipelineSchedule::dualpipev || kind == PipelineSchedule::dualpipe;
    std::int64_t p = 2 + draw(7);
    if (kind == PipelineSchedule::dualpipe) p += p % 2;  // even
    const std::int64_t v = kind == PipelineSchedule::interleaved ? 2 + draw(3) : two_chunks ? 2 : 1;
    ScheduleOptions options;
    if (kind == PipelineSchedule::interleaved && draw(2) == 0) options.microbatch_group = static_cast<std::int32_t>(p + draw(3));
    const std::int64_t group = options.microbatch_group > 0 ? options.microbatch_group : p;
    std::int64_t m = 32 + 3 * p + draw(90);
    if (kind == PipelineSchedule::interleaved) m = (m / group + 1) * group;
    if (kind == PipelineSchedule::dualpipe) m = 2 * m;  // even, and as long per pipeline as the others
    const auto seed = static_cast<std::uint32_t>(1 + draw(1000));
    SCOPED_TRACE(name(Case{kind, p, v, m}, seed, false) + " group=" + std::to_string(group));
    auto table = make_schedule(kind, p, v, m, options);
    ASSERT_TRUE(table.ok()) << table.error_text();
    SimulationInput full = drawn_input(p * v, seed, draw(2) == 0);
    if (draw(3) == 0) full.chunks[draw(static_cast<std::uint32_t>(full.chunks.size()))].forward.segments[0].seconds *= 4;
    skipped_runs += expect_skip_equals_full_run(*table, full) > 0 ? 1 : 0;
  }
  EXPECT_GE(skipped_runs, runs / 2);
}

TEST(SteadyState, EveryPipelinedScheduleSkipsMostOfALongRun) {
  // Uniform chunks, m = 512 (per pipeline): all but a few periods at each end are skipped.
  for (const Case& c : {Case{PipelineSchedule::one_f_one_b, 8, 1, 512}, Case{PipelineSchedule::interleaved, 8, 4, 512},
                        Case{PipelineSchedule::zb_h1, 8, 1, 512}, Case{PipelineSchedule::dualpipev, 8, 2, 512},
                        Case{PipelineSchedule::dualpipe, 8, 2, 1024}}) {
    SCOPED_TRACE(name(c, 3, true));
    auto table = make_schedule(c.kind, c.p, c.v, c.m);
    ASSERT_TRUE(table.ok());
    SimulationInput in = drawn_input(c.p * c.v, 3, true);
    in.keep_timeline = false;
    const auto r = simulate(*table, in);
    ASSERT_TRUE(r.ok());
    std::int64_t ops = 0;
    for (const auto& rank : table->ranks) ops += static_cast<std::int64_t>(rank.size());
    EXPECT_GT(r->skipped_ops, ops * 3 / 4) << r->skipped_ops << " of " << ops;
  }
}

// A short steady state is skipped too. Megatron's interleaved order has a period of a whole
// micro-batch group, so 4 to 8 groups leave 1.5 to 6 periods between the warm-up and the
// cool-down; its first cut lies half a period in, so one and a half are enough to compare one
// period and skip another. The search asked for 4 periods and 2p + 16 micro-batches, and
// simulated every op of such runs (64 x 4 x 512: 3.5 ms an estimate instead of 1.6,
// bench/results/time-core-cpu.txt, twelfth section).
TEST(SteadyState, AFewMicroBatchGroupsAreSkippedToo) {
  for (const Case& c : {Case{PipelineSchedule::interleaved, 16, 4, 80}, Case{PipelineSchedule::interleaved, 16, 4, 96},
                        Case{PipelineSchedule::interleaved, 16, 2, 128}, Case{PipelineSchedule::interleaved, 32, 4, 160},
                        Case{PipelineSchedule::interleaved, 32, 2, 256}}) {
    for (std::uint32_t seed : {3u, 4u}) {
      SCOPED_TRACE(name(c, seed, true));
      auto table = make_schedule(c.kind, c.p, c.v, c.m);
      ASSERT_TRUE(table.ok());
      SimulationInput in = drawn_input(c.p * c.v, seed, true);
      in.dp_issue = DpReduceIssue::at_end;
      for (ChunkCost& chunk : in.chunks) chunk.param_gather_seconds = 0;
      const std::int64_t skipped = expect_skip_equals_full_run(*table, in);
      // At least one period of every rank: p micro-batches of each of its v chunks, F and B.
      EXPECT_GE(skipped, c.p * c.p * c.v * 2) << skipped;
    }
  }
}

// Four groups (1.76 periods of repeating ops on the first rank) leave one comparison, from half
// a period in: a state that repeats from there skips a period. Compute, sends, and each chunk's
// gradient reduction issued after its last backward (Megatron's overlap_grad_reduce, the
// estimate's default), so a rank's periods end before its first chunk's last backward.
TEST(SteadyState, FourMicroBatchGroupsSkipAPeriod) {
  for (const auto& [p, v] : {std::pair<std::int64_t, std::int64_t>{32, 4}, {64, 4}}) {
    const Case c{PipelineSchedule::interleaved, p, v, 4 * p};
    SCOPED_TRACE(name(c, 0, false));
    auto table = make_schedule(c.kind, c.p, c.v, c.m);
    ASSERT_TRUE(table.ok());
    SimulationInput in;
    for (std::int64_t g = 0; g < p * v; ++g) {
      ChunkCost chunk;
      chunk.forward = compute_cost(kMs);
      chunk.backward = compute_cost(2 * kMs);
      chunk.send_activation_seconds = chunk.send_gradient_seconds = 0.05 * kMs;
      chunk.dp_reduce_seconds = 3 * kMs;
      in.chunks.push_back(chunk);
    }
    const std::int64_t skipped = expect_skip_equals_full_run(*table, in);
    EXPECT_EQ(skipped, p * p * v * 2) << "one period: p micro-batches of every chunk, F and B";
  }
}

TEST(SteadyState, TheTablePeriodIsTheSchedulesOwn) {
  auto period_of = [](PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m) {
    auto table = make_schedule(kind, p, v, m);
    EXPECT_TRUE(table.ok());
    std::vector<std::size_t> first(static_cast<std::size_t>(p), 0), end;
    for (const auto& ops : table->ranks) end.push_back(ops.size());
    return find_steady_period(*table, first, end);
  };
  // 1F1B: one forward and one backward, one micro-batch on.
  auto one = period_of(PipelineSchedule::one_f_one_b, 4, 1, 32);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->micro_batches, 1);
  EXPECT_EQ(one->ops, (std::vector<std::size_t>{2, 2, 2, 2}));
  // Rank r's steady state starts after its p - 1 - r warm-up forwards.
  EXPECT_EQ(one->begin, (std::vector<std::size_t>{3, 2, 1, 0}));
  // Interleaved, Megatron's order: groups of p micro-batches per chunk, so p micro-batches on and
  // 2 v p ops.
  auto interleaved = period_of(PipelineSchedule::interleaved, 4, 2, 64);
  ASSERT_TRUE(interleaved.has_value());
  EXPECT_EQ(interleaved->micro_batches, 4);
  EXPECT_EQ(interleaved->ops[0], 16u);
  // ZB-H1: F, B and W of one micro-batch.
  auto zb = period_of(PipelineSchedule::zb_h1, 4, 1, 32);
  ASSERT_TRUE(zb.has_value());
  EXPECT_EQ(zb->micro_batches, 1);
  EXPECT_EQ(zb->ops[0], 3u);
  // DualPipe: an F, B and W of each pipeline's micro-batch, both pipelines one micro-batch on.
  auto dual = period_of(PipelineSchedule::dualpipe, 4, 2, 64);
  ASSERT_TRUE(dual.has_value());
  EXPECT_EQ(dual->micro_batches, 1);
  EXPECT_EQ(dual->ops, (std::vector<std::size_t>{6, 6, 6, 6}));
  // Too few micro-batches for four periods: none.
  EXPECT_FALSE(period_of(PipelineSchedule::one_f_one_b, 4, 1, 6).has_value());
}

// The period's widening compares blocks of ops at once (steady_state.cpp): one op changed
// anywhere, in any field, at any place in a block, must end the repeating run exactly where an
// op-by-op comparison ends it.
TEST(SteadyState, OneChangedOpEndsThePeriodExactlyThere) {
  auto table = make_schedule(PipelineSchedule::one_f_one_b, 2, 1, 200);
  ASSERT_TRUE(table.ok());
  const std::vector<std::size_t> first(2, 0), end{table->ranks[0].size(), table->ranks[1].size()};
  const auto clean = find_steady_period(*table, first, end, TableKnown::in_order);
  ASSERT_TRUE(clean.has_value());
  ASSERT_EQ(clean->ops[0], 2u);
  // Where op-by-op widening from the middle stops, for rank 0 with one op changed.
  const auto expected = [&](const std::vector<ScheduleOp>& ops, std::size_t period) {
    const auto repeats = [&](std::size_t i) {
      const ScheduleOp& a = ops[i];
      const ScheduleOp& b = ops[i + period];
      return a.kind == b.kind && a.chunk == b.chunk && a.pairs_with_next == b.pairs_with_next &&
             b.micro_batch == a.micro_batch + 1;
    };
    const std::size_t mid = first[0] + (end[0] - first[0] - period) / 2;
    std::size_t b = mid, e = mid;
    while (b > first[0] && repeats(b - 1)) --b;
    while (e + period < end[0] && repeats(e)) ++e;
    return std::pair{b, e};
  };
  int changed = 0;
  for (std::size_t at = 40; at < 360; at += 7) {  // every offset in a 16-op block, both sides of the middle
    // Not the middle period, where the search looks for the period itself.
    if (at + 4 >= end[0] / 2 && at <= end[0] / 2 + 4) continue;
    for (int field = 0; field < 4; ++field) {
      ScheduleTable t = *table;
      ScheduleOp& o = t.ranks[0][at];
      if (field == 0) o.kind = o.kind == OpKind::forward ? OpKind::backward : OpKind::forward;
      if (field == 1) o.pairs_with_next = !o.pairs_with_next;
      if (field == 2) o.chunk += 1;
      if (field == 3) o.micro_batch += 1;
      SCOPED_TRACE("op " + std::to_string(at) + " field " + std::to_string(field));
      const auto [b, e] = expected(t.ranks[0], 2);
      const auto found = find_steady_period(t, first, end, TableKnown::in_order);
      if (e - b < 3 * 2) {
        EXPECT_FALSE(found.has_value());
        continue;
      }
      ASSERT_TRUE(found.has_value());
      EXPECT_EQ(found->begin[0], b);
      EXPECT_EQ(found->copies_end[0], e);
      changed += b != clean->begin[0] || e != clean->copies_end[0];
    }
  }
  EXPECT_GT(changed, 100);  // the changes did move the ends
}

// The periods a table's runs share (predict_time's two simulations): the same answer as a search
// of their own, from any thread, each range its own (GPipe's halves); and the runs' figures those
// of runs that search alone.
TEST(SteadyState, SharedPeriodsAnswerAsTheirOwnSearch) {
  auto table = make_schedule(PipelineSchedule::gpipe, 4, 1, 128);
  ASSERT_TRUE(table.ok());
  const std::size_t n = table->ranks[0].size();
  const std::vector<std::size_t> first(4, 1), mid(4, n / 2), end(4, n - 1);
  SteadyPeriods shared;
  std::optional<SteadyPeriod> a, b;
  std::thread other([&] { a = shared.find(*table, first, mid, TableKnown::in_order, 1); });
  b = shared.find(*table, mid, end, TableKnown::in_order, 1);
  other.join();
  for (const auto& [found, from, to] : {std::tuple{&a, &first, &mid}, std::tuple{&b, &mid, &end}}) {
    const auto own = find_steady_period(*table, *from, *to, TableKnown::in_order, 1);
    ASSERT_TRUE(found->has_value() && own.has_value());
    EXPECT_EQ((*found)->begin, own->begin);
    EXPECT_EQ((*found)->copies_end, own->copies_end);
    EXPECT_EQ((*found)->ops, own->ops);
    const auto again = shared.find(*table, *from, *to, TableKnown::in_order, 1);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->begin, own->begin);
  }
  EXPECT_NE(a->begin, b->begin);  // the two halves' periods
  // Two runs of one table sharing the search give what each gives alone.
  auto interleaved = make_schedule(PipelineSchedule::interleaved, 8, 4, 256);
  ASSERT_TRUE(interleaved.ok());
  SimulationInput in = drawn_input(32, 3, true);
  in.keep_timeline = false;
  SimulationInput free_transfers = in;
  for (ChunkCost& c : free_transfers.chunks) c.send_activation_seconds = c.send_gradient_seconds = 0;
  SteadyPeriods periods;
  for (const SimulationInput* run : {&in, &free_transfers}) {
    const auto alone = simulate_well_formed(*interleaved, *run);
    const auto sharing = simulate_well_formed(*interleaved, *run, &periods);
    ASSERT_TRUE(alone.ok() && sharing.ok());
    EXPECT_GT(sharing->skipped_ops, 0);
    EXPECT_EQ(alone->skipped_ops, sharing->skipped_ops);
    EXPECT_EQ(alone->iteration_ns, sharing->iteration_ns);
    EXPECT_EQ(alone->bubble_ns, sharing->bubble_ns);
  }
}

// The engine keeps its per-run arrays on the thread for the next run, but not past 64 MiB: a
// 2-stage pipeline of 2.5 million micro-batches (5 million pairs of two 8-byte times, 1F1B having
// no Ws: 80 MB) gives them back; a usual run keeps them.
TEST(EngineArrays, AThreadKeepsSmallArraysAndFreesHugeOnes) {
  const auto run = [](std::int64_t m) {
    auto table = make_schedule(PipelineSchedule::one_f_one_b, 2, 1, m);
    EXPECT_TRUE(table.ok());
    SimulationInput in = drawn_input(2, 5, true);
    in.keep_timeline = false;
    EXPECT_TRUE(simulate_well_formed(*table, in).ok());
  };
  run(1024);
  const std::size_t usual = thread_kept_array_bytes();
  EXPECT_GE(usual, std::size_t{2} * 1024 * 2 * sizeof(std::int64_t)) << "the 2 x 1024 pairs' two times are kept";
  run(2'500'000);
  EXPECT_LT(thread_kept_array_bytes(), std::size_t{64} << 20) << thread_kept_array_bytes();
}

// GPipe's halves (all forwards, then all backwards) are flow lines: a half repeats once the
// stage that feeds it is the slowest, and is skipped then; a slower stage further on gathers a
// growing backlog, and that half is simulated op by op. Either way every figure is the full run's.
TEST(SteadyState, GPipeSkipsEachHalfWhoseFeederIsTheSlowest) {
  auto table = make_schedule(PipelineSchedule::gpipe, 8, 1, 512);
  ASSERT_TRUE(table.ok());
  std::int64_t ops = 0;
  for (const auto& rank : table->ranks) ops += static_cast<std::int64_t>(rank.size());
  // slower: which chunk's forward and backward take longer; the share of ops each case skips.
  struct Slow {
    std::size_t chunk;
    double forward, backward;
    double skipped_min, skipped_max;
  };
  for (const Slow& slow : {Slow{0, 1.5, 1.0, 0.75, 1.0},    // the first stage feeds the forwards and is the slowest: both halves
                           Slow{7, 1.5, 1.0, 0.3, 0.5},     // the last stage's forwards are slower: the backwards only
                           Slow{3, 1.5, 1.5, 0.0, 0.0}}) {  // a middle stage is slower both ways: neither half
    SCOPED_TRACE("chunk " + std::to_string(slow.chunk) + " forward x" + std::to_string(slow.forward));
    SimulationInput in = drawn_input(8, 4, true);
    in.dp_issue = DpReduceIssue::at_end;
    for (ChunkCost& c : in.chunks) c.param_gather_seconds = 0;
    for (auto& segment : in.chunks[slow.chunk].forward.segments) segment.seconds *= slow.forward;
    for (auto& segment : in.chunks[slow.chunk].backward.segments) segment.seconds *= slow.backward;
    const double skipped = static_cast<double>(expect_skip_equals_full_run(*table, in)) / static_cast<double>(ops);
    EXPECT_GE(skipped, slow.skipped_min);
    EXPECT_LE(skipped, slow.skipped_max);
  }
}

// A skip runs as far as the ops repeat: to the last op whose copy lies a period before it
// (copies_end + P_r), not only to copies_end, which left a whole period more to simulate. And
// the first cut lies half a period in, past the first backward wave: with uniform chunks the
// state repeats from there with 3 and 4 virtual stages, so of a rank's repeating room only the
// period compared and a part of one are simulated one by one (with 2, one period more); from
// the period's start it took one period more. Never more than the room less the period compared.
TEST(SteadyState, ASkipRunsToTheLastOpThatRepeats) {
  struct Interleaved {
    Case c;
    std::size_t unskipped;  // whole periods of the room simulated one by one, at most
  };
  for (const auto& [c, unskipped] : {Interleaved{{PipelineSchedule::interleaved, 8, 4, 512}, 1},
                                     Interleaved{{PipelineSchedule::interleaved, 4, 2, 256}, 2},
                                     Interleaved{{PipelineSchedule::interleaved, 4, 3, 192}, 1}}) {
    SCOPED_TRACE(name(c, 3, true));
    auto table = make_schedule(c.kind, c.p, c.v, c.m);
    ASSERT_TRUE(table.ok());
    // No one-off ops inside the run (no gathers, reductions at the end): the engine's periods are
    // those of the table between each rank's first and last op.
    SimulationInput in = drawn_input(c.p * c.v, 3, true);
    in.keep_timeline = false;
    in.dp_issue = DpReduceIssue::at_end;
    for (ChunkCost& chunk : in.chunks) chunk.param_gather_seconds = 0;
    const auto run = simulate(*table, in);
    ASSERT_TRUE(run.ok());
    std::vector<std::size_t> first(static_cast<std::size_t>(c.p), 1), end;
    for (const auto& ops : table->ranks) end.push_back(ops.size() - 1);
    const auto period = find_steady_period(*table, first, end, TableKnown::in_order);
    ASSERT_TRUE(period.has_value());
    std::size_t ops_per_period = 0, room = SIZE_MAX;  // room: whole periods every rank repeats
    for (std::size_t r = 0; r < period->ops.size(); ++r) {
      ops_per_period += period->ops[r];
      room = std::min(room, (period->copies_end[r] + period->ops[r] - period->begin[r]) / period->ops[r]);
    }
    ASSERT_EQ(run->skipped_ops % static_cast<std::int64_t>(ops_per_period), 0);
    const auto skipped_periods = static_cast<std::size_t>(run->skipped_ops) / ops_per_period;
    EXPECT_GE(skipped_periods + unskipped, room);
    EXPECT_LE(skipped_periods + 1, room);
  }
}

// make_schedule finds each rank's repeating run while it writes the rank's list
// (ScheduleTable::repeating), and the period search of its own tables starts from it instead of
// walking the table: it must give what the walk gives, for every schedule and for any ops held
// out at either end (a chunk's gather, its gradient reduction, the rank's last op).
TEST(SteadyState, MakeSchedulesRunsGiveTheWalksPeriod) {
  std::uint32_t x = 7;
  auto draw = [&x](std::size_t below) {
    x = x * 1664525u + 1013904223u;
    return static_cast<std::size_t>(x >> 8) % below;
  };
  int used = 0, grouped = 0;
  for (const PipelineSchedule kind : {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zb_h1,
                                      PipelineSchedule::dualpipev, PipelineSchedule::dualpipe}) {
    for (const std::int64_t p : {2, 4, 6, 8}) {
      for (std::int64_t m : {16, 48, 96, 128, 0}) {
        const bool interleaved = kind == PipelineSchedule::interleaved;
        // Interleaved also with one of Megatron's micro-batch groups other than p, whose last
        // group is shorter (m % group = p); the other schedules then run 6p + 18 micro-batches.
        ScheduleOptions options;
        if (m == 0) {
          m = 6 * (p + 3) + p;
          if (interleaved) options.microbatch_group = static_cast<std::int32_t>(p + 3);
        }
        const std::int64_t v = interleaved ? 2 + (p + m / 16) % 3 : (kind == PipelineSchedule::dualpipev || kind == PipelineSchedule::dualpipe ? 2 : 1);
        auto table = make_schedule(kind, p, v, m, options);
        if (!table.ok()) continue;
        grouped += options.microbatch_group > 0 ? 1 : 0;
        SCOPED_TRACE(std::string(to_string(kind)) + " p " + std::to_string(p) + " v " + std::to_string(v) + " m " +
                     std::to_string(m) + " group " + std::to_string(options.microbatch_group));
        ASSERT_EQ(table->repeating.size(), table->ranks.size());
        // Each run is the widest through the middle, op by op.
        for (std::size_t r = 0; r < table->ranks.size(); ++r) {
          const RepeatingOps& run = table->repeating[r];
          const auto& ops = table->ranks[r];
          if (run.period == 0) continue;
          ++used;
          const auto repeats = [&](std::size_t i) {
            const ScheduleOp& a = ops[i];
            const ScheduleOp& b = ops[i + run.period];
            return a.kind == b.kind && a.chunk == b.chunk && a.pairs_with_next == b.pairs_with_next &&
                   b.micro_batch == a.micro_batch + run.micro_batches;
          };
          const std::size_t mid = (ops.size() - run.period) / 2;
          ASSERT_TRUE(run.begin <= mid && mid < run.end);
          for (std::size_t i = run.begin; i < run.end; ++i) ASSERT_TRUE(repeats(i)) << i;
          EXPECT_TRUE(run.begin == 0 || !repeats(run.begin - 1));
          EXPECT_TRUE(run.end + run.period == ops.size() || !repeats(run.end));
        }
        // The search from the runs gives the walk's period, with ops held out at either end.
        for (int trial = 0; trial < 6; ++trial) {
          std::vector<std::size_t> first, end;
          for (const auto& ops : table->ranks) {
            first.push_back(trial == 0 ? 0 : draw(ops.size() / 4));
            end.push_back(ops.size() - (trial == 0 ? 0 : draw(ops.size() / 4)));
          }
          const auto walked = find_steady_period(*table, first, end, TableKnown::in_order);
          const auto known = find_steady_period(*table, first, end, TableKnown::generated);
          ASSERT_EQ(walked.has_value(), known.has_value()) << trial;
          if (!walked) continue;
          EXPECT_EQ(known->micro_batches, walked->micro_batches);
          EXPECT_EQ(known->ops, walked->ops);
          EXPECT_EQ(known->begin, walked->begin);
          EXPECT_EQ(known->copies_end, walked->copies_end);
        }
      }
    }
  }
  EXPECT_GT(used, 300);  // runs were found, not left empty
  EXPECT_GT(grouped, 0);  // and some with a group other than p
}

// A table edited after make_schedule keeps its runs, now stale: only its own tables are searched
// from them (TableKnown::generated), an edited one is walked.
TEST(SteadyState, AnEditedTableIsWalked) {
  auto table = make_schedule(PipelineSchedule::one_f_one_b, 2, 1, 200);
  ASSERT_TRUE(table.ok());
  ScheduleTable edited = *table;
  edited.ranks[0][300].micro_batch += 1;  // past the middle (op 199): the walk stops there
  const std::vector<std::size_t> first(2, 0), end{edited.ranks[0].size(), edited.ranks[1].size()};
  const auto walked = find_steady_period(edited, first, end, TableKnown::in_order);
  ASSERT_TRUE(walked.has_value());
  EXPECT_LT(walked->copies_end[0], 300u);
  const auto trusted = find_steady_period(edited, first, end, TableKnown::generated);
  ASSERT_TRUE(trusted.has_value());
  EXPECT_GT(trusted->copies_end[0], 300u);  // the stale run: why simulations of edited tables walk
}

}  // namespace
}  // namespace plansight::estimator
