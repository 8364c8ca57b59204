// The steady-state skip when ranks move on by periods of their own (pipeline_simulator.cpp,
// skip_region; iteration_engine.h, rank_shifts, pending_repeat and margin_cycles): a stage that
// is slower than the rest, as the embedding and the LM head make the first and last chunks,
// holds back the ranks it feeds only once their backlog from the warm-up is worked off, so for a
// while each rank keeps its own pace and the state repeats per rank, never as a whole. Such a
// run skips to the first decision between two ranks that may change side, and every figure stays
// the op-by-op run's.
// Where no rank keeps one pace (a rank waiting for inputs from two sides that come at different
// paces), the drift search (iteration_engine.h, drift_shifts) skips while every time of the state
// moves on by a shift of its own.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>

#include "drawn_costs.h"
#include "iteration_engine.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "steady_state.h"
#include "trillion_test_plans.h"

namespace plansight::estimator {
namespace {

constexpr double kMs = 1e-3;

// Every chunk alike but those of the model's ends (the first and last of each pipeline), which
// cost `head` times as much: the embedding's and the LM head's work. Sends on the lane.
SimulationInput head_heavy_input(PipelineSchedule kind, std::int64_t p, std::int64_t v, double head, double send_ms) {
  SimulationInput in;
  for (std::int64_t g = 0; g < p * v; ++g) {
    const bool end = starts_pipeline(kind, p, g) || ends_pipeline(kind, p, v, g);
    const double f = end ? head : 1.0;
    ChunkCost c;
    c.forward = compute_cost(1.0 * kMs * f);
    c.backward = compute_cost(2.0 * kMs * f);
    c.weight_grad = compute_cost(0.7 * kMs * f);
    c.send_activation_seconds = send_ms * kMs;
    c.send_gradient_seconds = send_ms * kMs;
    in.chunks.push_back(c);
  }
  in.optimizer_seconds = 1 * kMs;
  return in;
}

std::int64_t table_ops(const ScheduleTable& t) {
  std::int64_t ops = 0;
  for (const auto& rank : t.ranks) ops += static_cast<std::int64_t>(rank.size());
  return ops;
}

// The lean run (which skips) against the kept-timeline run (which never does); returns the lean.
SimulationResult expect_full_run_figures(const ScheduleTable& table, SimulationInput in) {
  in.keep_timeline = true;
  const auto full = simulate(table, in);
  in.keep_timeline = false;
  const auto lean = simulate(table, in);
  EXPECT_TRUE(full.ok() && lean.ok());
  if (!full.ok() || !lean.ok()) return {};
  EXPECT_EQ(full->skipped_ops, 0);
  test::expect_same_figures(*lean, *full);
  return *lean;
}

TEST(OwnPeriods, AHeavyHeadLetsDualPipeVSkipWhileItsRanksMoveApart) {
  // DualPipeV's rank 0 holds both ends of the model. Before this skip a run whose state repeats
  // only per rank simulated every op of that phase: 25 % of this table's ops one by one (measured
  // on the engine before it), now 13 %; at 64 x 1024, 59 % -> 25 % (time-core-cpu.txt, tenth
  // section).
  auto table = make_schedule(PipelineSchedule::dualpipev, 8, 2, 256);
  ASSERT_TRUE(table.ok()) << table.error_text();
  const SimulationResult lean = expect_full_run_figures(*table, head_heavy_input(PipelineSchedule::dualpipev, 8, 2, 1.05, 0.05));
  EXPECT_LT(lean.simulated_ops, table_ops(*table) / 5) << lean.simulated_ops << " of " << table_ops(*table);
  EXPECT_EQ(lean.simulated_ops + lean.skipped_ops, table_ops(*table));
}

TEST(OwnPeriods, ZbH1SkipsWhileItsDeferredWsReadBackwardEndsOfAnEarlierPace) {
  // ZB-H1 defers each rank's Ws by up to p micro-batches: the backward ends they read were
  // written at the pace the rank had when the front of the slower head passed it. Those ends never
  // decide when a W starts (its B ran before it on its rank) and are left out of the compared
  // state; compared, they kept the run from repeating per rank until the front had passed every
  // rank.
  // Simulated one by one, of 24,576 ops: 7,680 in both cases before, 3,264 now.
  auto table = make_schedule(PipelineSchedule::zb_h1, 32, 1, 256);
  ASSERT_TRUE(table.ok()) << table.error_text();
  for (const auto& [head, send_ms] : {std::pair{1.01, 0.05}, std::pair{1.05, 0.3}}) {
    SCOPED_TRACE(std::to_string(head) + " " + std::to_string(send_ms));
    const SimulationResult lean = expect_full_run_figures(*table, head_heavy_input(PipelineSchedule::zb_h1, 32, 1, head, send_ms));
    EXPECT_LT(lean.simulated_ops, 5000) << lean.simulated_ops << " of " << table_ops(*table);
    EXPECT_EQ(lean.simulated_ops + lean.skipped_ops, table_ops(*table));
  }
}

TEST(OwnPeriods, EverySchedulesFiguresAreTheFullRunsWithHeadsOfAnyWeight) {
  // Heads lighter and heavier, by little (a front that moves slowly: many skips) and by much;
  // sends from none to ones that queue; costs in tenths of milliseconds make ties between ranks'
  // times.
  struct Case {
    PipelineSchedule kind;
    std::int64_t p, v, m;
  };
  const Case cases[] = {{PipelineSchedule::dualpipev, 4, 2, 96},  {PipelineSchedule::dualpipev, 8, 2, 200},
                        {PipelineSchedule::dualpipev, 16, 2, 320}, {PipelineSchedule::dualpipe, 8, 2, 256},
                        {PipelineSchedule::dualpipe, 4, 2, 128},   {PipelineSchedule::zb_h1, 8, 1, 160},
                        {PipelineSchedule::one_f_one_b, 8, 1, 160}, {PipelineSchedule::interleaved, 4, 2, 128},
                        {PipelineSchedule::gpipe, 4, 1, 96}};
  int skipped = 0, runs = 0;
  for (const Case& c : cases) {
    auto table = make_schedule(c.kind, c.p, c.v, c.m);
    ASSERT_TRUE(table.ok()) << table.error_text();
    for (const double head : {0.9, 0.999, 1.001, 1.02, 1.3, 2.0}) {
      for (const double send_ms : {0.0, 0.05, 0.9}) {
        SCOPED_TRACE(std::string(to_string(c.kind)) + " p=" + std::to_string(c.p) + " m=" + std::to_string(c.m) +
                     " head=" + std::to_string(head) + " send=" + std::to_string(send_ms));
        ++runs;
        skipped += expect_full_run_figures(*table, head_heavy_input(c.kind, c.p, c.v, head, send_ms)).skipped_ops > 0;
      }
    }
  }
  EXPECT_GE(skipped, runs / 2) << skipped << " of " << runs;
}

TEST(OwnPeriods, DrawnCostsWithASlowEndGiveTheFullRunsFigures) {
  // drawn_costs.h's chunks (TP segments on the lane, recomputation, gathers, bucketed or final
  // reductions) with the first and last chunks slowed: the skip meets every kind of decision.
  std::uint32_t x = 2026;
  auto ms = [&x](double lo, double hi) {
    x = x * 1664525u + 1013904223u;
    return (lo + (hi - lo) * static_cast<double>(x >> 8) / static_cast<double>(1u << 24)) * kMs;
  };
  const std::array kinds{PipelineSchedule::dualpipev, PipelineSchedule::dualpipe, PipelineSchedule::zb_h1,
                         PipelineSchedule::one_f_one_b};
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    const PipelineSchedule kind = kinds[seed % kinds.size()];
    const std::int64_t p = kind == PipelineSchedule::dualpipe ? 4 + 2 * (seed % 3) : 3 + seed % 6;
    const std::int64_t v = kind == PipelineSchedule::dualpipev || kind == PipelineSchedule::dualpipe ? 2 : 1;
    const std::int64_t m = 2 * (16 * p + 8 * (seed % 4));
    auto table = make_schedule(kind, p, v, m);
    ASSERT_TRUE(table.ok()) << table.error_text();
    SimulationInput in;
    const ChunkCost base = test::drawn_chunk(ms, seed);
    const double slow = 1.0 + ms(0.5, 60);  // 1.0005 .. 1.06
    for (std::int64_t g = 0; g < p * v; ++g) {
      ChunkCost c = base;
      if (starts_pipeline(kind, p, g) || ends_pipeline(kind, p, v, g)) {
        for (auto* op : {&c.forward, &c.backward, &c.weight_grad}) {
          for (auto& s : op->segments) {
            if (s.lane == Lane::compute) s.seconds *= slow;
          }
        }
      }
      in.chunks.push_back(c);
    }
    test::draw_run_settings(in, ms, seed);
    SCOPED_TRACE(std::string(to_string(kind)) + " p=" + std::to_string(p) + " m=" + std::to_string(m) +
                 " seed=" + std::to_string(seed));
    expect_full_run_figures(*table, in);
  }
}

TEST(OwnPeriods, RanksThatKeepADecisionOnItsEdgeLeaveTheUniformSearchItsStrides) {
  // Uneven chunks whose state repeats per rank with a decision that stays on its edge (no
  // per-rank skip), and as a whole only over several periods: the uniform search must still find
  // that (a cut every period for the per-rank comparison hid it: 0 ops skipped instead of 3,456).
  auto table = make_schedule(PipelineSchedule::interleaved, 6, 3, 126);
  ASSERT_TRUE(table.ok()) << table.error_text();
  const double ms[18][3] = {{2, 5, 1}, {1, 1, 2}, {1, 2, 1}, {3, 1, 1}, {4, 4, 2}, {5, 1, 1}, {1, 6, 1}, {1, 3, 4}, {3, 1, 3},
                            {1, 4, 4}, {1, 2, 1}, {1, 4, 4}, {1, 6, 2}, {2, 4, 1}, {2, 2, 1}, {3, 8, 1}, {1, 4, 1}, {1, 4, 3}};
  SimulationInput in;
  for (const auto& c : ms) {
    ChunkCost chunk;
    chunk.forward = compute_cost(c[0] * kMs);
    chunk.backward = compute_cost(c[1] * kMs);
    chunk.weight_grad = compute_cost(c[2] * kMs);
    in.chunks.push_back(chunk);
  }
  in.dp_issue = DpReduceIssue::at_end;
  in.dp_buckets = 4;
  in.optimizer_seconds = 1 * kMs;
  const SimulationResult lean = expect_full_run_figures(*table, in);
  EXPECT_GE(lean.skipped_ops, 3456) << lean.skipped_ops << " of " << table_ops(*table);
}

TEST(OwnPeriods, ATableThatDeadlocksIsReportedNotSearchedForever) {
  // The last rank's forward of micro-batch 10 made to wait for its own backward's input too: no
  // rank can pass it, while the steady state's search kept moving its cuts on (and its memory
  // grew without end).
  auto table = make_schedule(PipelineSchedule::one_f_one_b, 2, 1, 40);
  ASSERT_TRUE(table.ok());
  for (ScheduleOp& o : table->ranks[1]) {
    if (o.kind == OpKind::forward && o.micro_batch == 10) o.pairs_with_next = true;
  }
  SimulationInput in;
  in.chunks = {ChunkCost{}};
  in.chunks[0].forward = compute_cost(1 * kMs);
  in.chunks[0].backward = compute_cost(2 * kMs);
  for (const bool keep : {true, false}) {
    in.keep_timeline = keep;
    const auto run = simulate(*table, in);
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.error_text().find("deadlock"), std::string::npos) << run.error_text();
  }
}

// margin_cycles() on recorded decisions, directly: how many more periods keep each on its side.
class MarginProbe : IterationEngine {
 public:
  MarginProbe(const ScheduleTable& t, const SimulationInput& in) : IterationEngine(t, nullptr, in, to_ns_costs(in, t.stages()).value(), false) {}
  std::int64_t cycles(std::vector<Margin> margins, const std::vector<std::int64_t>& ns) {
    margins_ = std::move(margins);
    return margin_cycles(ns);
  }
};

TEST(OwnPeriods, AMarginKeepsItsSideForAsManyPeriodsAsItCovers) {
  auto table = make_schedule(PipelineSchedule::one_f_one_b, 3, 1, 8);
  ASSERT_TRUE(table.ok());
  SimulationInput in;
  in.chunks = {ChunkCost{}};
  in.chunks[0].forward = compute_cost(1 * kMs);
  in.chunks[0].backward = compute_cost(2 * kMs);
  MarginProbe probe(*table, in);
  // Periods: rank 0 moves on by 100 a period, ranks 1 and 2 by 90.
  const std::vector<std::int64_t> ns{100, 90, 90};
  // Rank 1's input from rank 0 came 250 before rank 1 was free: the gap closes by 10 a period,
  // so 25 more periods keep rank 1 free first (the 25th a tie, the same max either way).
  EXPECT_EQ(probe.cycles({{1, 0, 250, false}}, ns), 25);
  EXPECT_EQ(probe.cycles({{1, 0, 259, false}}, ns), 25);
  // Rank 0's input from rank 1 came 5 before rank 0 was free; the gap only widens.
  EXPECT_EQ(probe.cycles({{0, 1, 5, false}}, ns), INT64_MAX);
  // Ranks that move alike decide alike for ever, waiting or not.
  EXPECT_EQ(probe.cycles({{2, 1, 7, false}, {2, 1, -7, false}}, ns), INT64_MAX);
  // The smallest bound holds.
  EXPECT_EQ(probe.cycles({{1, 0, 250, false}, {1, 0, 40, false}, {0, 1, 3, false}}, ns), 4);
  // An op that waited for an input moving apart from its rank: its rank would take that pace.
  EXPECT_EQ(probe.cycles({{1, 0, -30, false}}, ns), 0);
  // A tie between ranks moving apart changes side at once.
  EXPECT_EQ(probe.cycles({{1, 0, 0, false}}, ns), 0);
  EXPECT_EQ(probe.cycles({{0, 1, 0, true}}, ns), 0);
  // An overlapped pair's two inputs: the first (from rank 1) came 35 before the second (from
  // rank 0); rank 0's moves 10 a period later, so the order holds for ever; reversed, it closes.
  EXPECT_EQ(probe.cycles({{1, 0, -35, true}}, ns), INT64_MAX);
  EXPECT_EQ(probe.cycles({{0, 1, -35, true}}, ns), 3);
}

TEST(Drift, ComparisonsBoundTheSkipByTheirOwnChange) {
  const auto cycles = [](std::vector<std::int64_t> before, std::vector<std::int64_t> now) {
    return comparison_cycles(before.data(), now.data(), now.size());
  };
  // A rank's backward waited 46 ms, then 42.4 ms for its input (its clock less the input's
  // arrival: -46, -42.4): 3.6 ms closer a period, so 11 more periods keep it waiting (11.78).
  EXPECT_EQ(cycles({-46'000'000}, {-42'400'000}), 11);
  // Its forward waited 5.6, then 9.2 ms: moving away from the other side, for ever.
  EXPECT_EQ(cycles({-5'600'000}, {-9'200'000}), INT64_MAX);
  // Reaching zero at the last period is a tie, the same max() either way.
  EXPECT_EQ(cycles({40}, {30}), 3);
  EXPECT_EQ(cycles({-40}, {-30}), 3);
  // The least bound of all; comparisons that do not move never bound it.
  EXPECT_EQ(cycles({-46, 7, 100, 5}, {-42, 7, 90, 5}), 9);
  // A comparison that changed side between the two periods, or sits on its edge and moves:
  // nothing may be skipped.
  EXPECT_EQ(cycles({5}, {-5}), 0);
  EXPECT_EQ(cycles({0}, {3}), 0);
  // A tie that stays one holds.
  EXPECT_EQ(cycles({0}, {0}), INT64_MAX);
  // Made in one period and not the other: not the same decisions.
  EXPECT_EQ(cycles({kNoComparison}, {4}), 0);
  EXPECT_EQ(cycles({kNoComparison, 4}, {kNoComparison, 2}), 1);
}

TEST(Drift, OneFOneBWithZeroThreeSkipsWhileAFrontMovesUpTheRanks) {
  // 1F1B with ZeRO-3 gathers not prefetched, 64 stages x 1,024 micro-batches of Narayanan et
  // al.'s 1 T model (its 256-layer form, bench/bench_plans.h): the first stage, whose gathers
  // include the embedding's, is the slowest by 0.3 %. Above it, each rank runs its backward as
  // soon as its input comes from the ranks above, at their faster pace, and its forward when its
  // input comes from below, at the first stage's: two paces in one rank, until the backward
  // inputs no longer come later than the forwards end, and a front moves up one rank about
  // every dozen periods. No rank keeps one pace and no state repeats per rank: the searches
  // before drift's simulated 115,712 of its 131,072 ops one by one (88 %).
  const Plan plan = trillion_64_stages_zero3(PipelineSchedule::one_f_one_b, 1);
  const auto e = estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  TimeModelOptions options;
  options.keep_timeline = true;  // never skips
  const auto full = predict_time(plan, e->padded_vocab, options);
  options.keep_timeline = false;
  const auto lean = predict_time(plan, e->padded_vocab, options);
  ASSERT_TRUE(full.ok() && lean.ok());
  EXPECT_EQ(full->skipped_ops, 0);
  EXPECT_EQ(lean->iteration_s, full->iteration_s);
  EXPECT_EQ(lean->bubble_fraction, full->bubble_fraction);
  EXPECT_EQ(lean->bubble_fraction_max, full->bubble_fraction_max);
  const TimeBreakdown& a = lean->breakdown;
  const TimeBreakdown& b = full->breakdown;
  for (const auto& [x, y] : {std::pair{a.compute_s, b.compute_s}, std::pair{a.pp_comm_s, b.pp_comm_s},
                             std::pair{a.dp_comm_s, b.dp_comm_s}, std::pair{a.bubble_s, b.bubble_s},
                             std::pair{a.optimizer_s, b.optimizer_s}}) {
    EXPECT_EQ(x, y);
  }
  // With drift: 36,096 (28 %).
  const std::int64_t ops = schedule_ops(plan);
  EXPECT_EQ(lean->simulated_ops + lean->skipped_ops, ops);
  EXPECT_LT(lean->simulated_ops, ops * 3 / 10) << lean->simulated_ops << " of " << ops;
}

}  // namespace
}  // namespace plansight::estimator
