// DualPipe's lower half standing for all its ranks (simulation_costs.h): with the same costs in
// both pipelines, the V of p/2 ranks and m/2 micro-batches gives every figure of the whole
// table's op-by-op run, for every rank, with half the ops; with different costs it is refused.
#include <gtest/gtest.h>

#include <string>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "drawn_costs.h"
#include "simulation_costs.h"
#include "steady_state.h"

namespace plansight::estimator {
namespace {

constexpr double kMs = 1e-3;

// Costs of DualPipe's 2p chunks (drawn_costs.h), stage s of both pipelines alike (chunks s and
// p + s), drawn per stage. `whole_ms`: every duration a whole number of ms (the shorter ones 0),
// so that ops end at the same instants and every tie between an input and a free rank is met.
SimulationInput mirrored_input(std::int64_t p, std::uint32_t seed, bool whole_ms) {
  std::uint32_t x = seed * 2654435761u + 1;
  auto ms = [&](double lo, double hi) {
    x = x * 1664525u + 1013904223u;
    const double v = 3 * (lo + (hi - lo) * static_cast<double>(x >> 8) / static_cast<double>(1u << 24));
    return (whole_ms ? static_cast<double>(static_cast<int>(v + 0.5)) : v) * kMs;
  };
  std::vector<ChunkCost> stages;
  for (std::int64_t s = 0; s < p; ++s) stages.push_back(test::drawn_chunk(ms, seed));
  SimulationInput in;
  for (int copy = 0; copy < 2; ++copy) in.chunks.insert(in.chunks.end(), stages.begin(), stages.end());
  test::draw_run_settings(in, ms, seed);
  in.keep_timeline = false;
  return in;
}

TEST(DualPipeMirror, TheLowerHalfGivesEveryFigureOfTheWholeTable) {
  int runs = 0;
  for (std::int64_t p : {2, 4, 6, 8, 16}) {
    for (std::int64_t m : {2 * p, 2 * p + 2, 6 * p, 8 * p + 4}) {
      for (std::uint32_t seed = 0; seed < 12; ++seed) {
        for (bool whole_ms : {false, true}) {
          SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) + " seed=" + std::to_string(seed) +
                       (whole_ms ? " whole ms" : ""));
          const SimulationInput in = mirrored_input(p, seed, whole_ms);
          ASSERT_TRUE(dualpipe_mirrors(in, p));
          auto table = make_schedule(PipelineSchedule::dualpipe, p, 2, m);
          auto half = make_dualpipe_lower_half(p, m, ScheduleOptions{});
          ASSERT_TRUE(table.ok() && half.ok());
          SimulationInput kept = in;
          kept.keep_timeline = true;  // op by op, every rank, nothing skipped
          const auto whole = simulate(*table, kept);
          const auto mirrored = simulate_dualpipe_lower_half(*half, in);
          ASSERT_TRUE(whole.ok() && mirrored.ok()) << whole.error_text() << mirrored.error_text();
          test::expect_same_figures(*mirrored, *whole);
          // Half the ops at most were simulated; the rest mirrored or skipped.
          const std::int64_t ops = 3 * p * m;
          EXPECT_EQ(whole->simulated_ops, ops);
          EXPECT_EQ(mirrored->simulated_ops + mirrored->skipped_ops / 2, ops / 2);
          EXPECT_GT(mirrored->simulated_ops, 0);
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 5 * 4 * 12 * 2);
}

TEST(DualPipeMirror, PipelinesThatDifferAreSimulatedWhole) {
  SimulationInput in = mirrored_input(4, 3, false);
  in.chunks[4 + 1].forward.segments[0].seconds += 1e-6;  // stage 1 of the second copy, 1 us slower
  EXPECT_FALSE(dualpipe_mirrors(in, 4));
  auto half = make_dualpipe_lower_half(4, 16, ScheduleOptions{});
  ASSERT_TRUE(half.ok());
  const auto refused = simulate_dualpipe_lower_half(*half, in);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.errors().front().field, "simulation.chunks");
  // A timeline shows every rank's spans: the whole table runs.
  SimulationInput kept = mirrored_input(4, 3, false);
  kept.keep_timeline = true;
  EXPECT_FALSE(dualpipe_mirrors(kept, 4));
  // One cost for every chunk mirrors.
  SimulationInput one = mirrored_input(4, 3, false);
  one.chunks.resize(1);
  EXPECT_TRUE(dualpipe_mirrors(one, 4));
  EXPECT_TRUE(simulate_dualpipe_lower_half(*half, one).ok());
  // Ranks that share processors slow each other down by how many compute at once, which the
  // upper half's absence would change: the whole table runs.
  SimulationInput shared = one;
  shared.shared_processors = 2;
  shared.threads_per_rank = 1;
  EXPECT_FALSE(dualpipe_mirrors(shared, 4));
  const auto refused_shared = simulate_dualpipe_lower_half(*half, shared);
  ASSERT_FALSE(refused_shared.ok());
  EXPECT_EQ(refused_shared.errors().front().field, "simulation.chunks");
}

TEST(DualPipeMirror, TheHalfIsCheckedAsDualPipeIs) {
  auto field = [](const Result<ScheduleTable>& r) { return r.ok() ? std::string("ok") : r.errors().front().field; };
  EXPECT_EQ(field(make_dualpipe_lower_half(3, 12, ScheduleOptions{})), field(make_schedule(PipelineSchedule::dualpipe, 3, 2, 12)));
  EXPECT_EQ(field(make_dualpipe_lower_half(4, 7, ScheduleOptions{})), "training.global_batch");
  EXPECT_EQ(field(make_dualpipe_lower_half(4, 6, ScheduleOptions{})), "training.global_batch");
  const auto half = make_dualpipe_lower_half(8, 32, ScheduleOptions{});
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->kind, PipelineSchedule::dualpipev);
  EXPECT_EQ(half->p, 4);
  EXPECT_EQ(half->m, 16);
}

// The estimate of a DualPipe plan runs its lower half (both pipelines cost the same); the
// prediction with a timeline runs the whole table: every figure the same.
TEST(DualPipeMirror, AnEstimateIsTheSameWithAndWithoutTheTimeline) {
  Plan plan = default_plan();
  plan.layout.pp = 8;
  plan.layout.vpp = 2;
  plan.layout.schedule = PipelineSchedule::dualpipe;
  plan.training.global_batch = plan.training.micro_batch * plan.dp() * 64;
  auto estimated = estimate(plan);
  ASSERT_TRUE(estimated.ok()) << estimated.error_text();
  const auto predicted = [&](bool timeline) {
    TimeModelOptions options;
    options.keep_timeline = timeline;
    return predict_time(plan, estimated->padded_vocab, options);
  };
  const auto a = predicted(false), b = predicted(true);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LE(2 * a->simulated_ops, b->simulated_ops);  // the lower half only
  EXPECT_EQ(a->iteration_s, b->iteration_s);
  EXPECT_EQ(a->bubble_fraction, b->bubble_fraction);
  EXPECT_EQ(a->bubble_fraction_max, b->bubble_fraction_max);
  EXPECT_EQ(a->breakdown.bubble_s, b->breakdown.bubble_s);
  EXPECT_EQ(a->breakdown.pp_comm_s, b->breakdown.pp_comm_s);
  EXPECT_EQ(a->breakdown.dp_comm_s, b->breakdown.dp_comm_s);
}

}  // namespace
}  // namespace plansight::estimator
