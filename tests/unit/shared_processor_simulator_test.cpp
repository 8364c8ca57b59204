// The processor-sharing simulator (SimulationInput::shared_processors): equal to the ordinary
// simulator when every thread has a processor, work-conserving when they do not (the iteration
// is the work over the processors while every rank computes), and the closed forms of fluid
// processor sharing (Kleinrock 1967) on small cases worked by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "plansight/estimator/pipeline_simulator.h"
#include "shared_processor_simulator.h"  // estimator/src: the shared model called directly

namespace plansight::estimator {
namespace {

constexpr double kMs = 1e-3;
constexpr std::int64_t kMsNs = 1'000'000;

ChunkCost uniform(double f_ms, double b_ms) {
  ChunkCost c;
  c.forward = compute_cost(f_ms * kMs);
  c.backward = compute_cost(b_ms * kMs);
  return c;
}

SimulationResult run(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m, const SimulationInput& input) {
  auto table = make_schedule(kind, p, v, m);
  EXPECT_TRUE(table.ok()) << table.error_text();
  auto result = simulate(*table, input);
  EXPECT_TRUE(result.ok()) << result.error_text();
  return std::move(result).value();
}

SimulationInput shared(const ChunkCost& cost, std::int64_t processors, std::int64_t threads, double optimizer_ms = 0) {
  SimulationInput in;
  in.chunks = {cost};
  in.shared_processors = processors;
  in.threads_per_rank = threads;
  in.optimizer_seconds = optimizer_ms * kMs;
  return in;
}

// The shared-processor model run with a processor for every thread (simulate() would pick the
// dedicated model; simulate_shared() is called directly) is the dedicated model: the same times,
// bubbles and spans, on every schedule, with TP segments, sends, ZeRO-3 gathers, bucketed DP
// reductions and the optimizer's all-gather. Both drive one engine (iteration_engine.h); this
// holds their two ways of advancing it equal.
TEST(SharedProcessorSimulator, EnoughProcessorsEqualsTheDedicatedModel) {
  const std::tuple<PipelineSchedule, std::int64_t, std::int64_t, std::int64_t> grid[] = {
      {PipelineSchedule::gpipe, 4, 1, 6}, {PipelineSchedule::one_f_one_b, 4, 1, 8},
      {PipelineSchedule::interleaved, 2, 2, 4}, {PipelineSchedule::zb_h1, 3, 1, 6}};
  std::uint32_t x = 7;
  auto ms = [&x](double lo, double hi) {  // a deterministic draw in [lo, hi) ms
    x = x * 1664525u + 1013904223u;
    return (lo + (hi - lo) * static_cast<double>(x >> 8) / static_cast<double>(1u << 24)) * kMs;
  };
  for (const auto& [kind, p, v, m] : grid) {
    for (int variant = 0; variant < 2; ++variant) {
      SCOPED_TRACE(std::string(to_string(kind)) + " variant " + std::to_string(variant));
      SimulationInput in;
      for (std::int64_t g = 0; g < p * v; ++g) {
        ChunkCost c;
        c.forward.segments = {{Lane::compute, ms(0.5, 1.5)}, {Lane::communication, ms(0.05, 0.3)}, {Lane::compute, ms(0.1, 0.4)}};
        c.backward.segments = {{Lane::compute, ms(1, 3)}, {Lane::communication, ms(0.05, 0.3)}};
        c.weight_grad = compute_cost(ms(0.3, 1));
        c.recompute = compute_cost(variant == 0 ? 0 : ms(0.1, 0.5));
        c.send_activation_seconds = ms(0.01, 0.2);
        c.send_gradient_seconds = ms(0.01, 0.2);
        c.dp_reduce_seconds = ms(1, 6);
        c.param_gather_seconds = variant == 1 ? ms(0.1, 1) : 0;
        in.chunks.push_back(c);
      }
      in.optimizer_seconds = ms(0.2, 1);
      in.optimizer_gather_seconds = variant == 0 ? ms(0.1, 0.5) : 0;
      in.dp_buckets = variant == 0 ? 3 : 1;
      in.dp_issue = variant == 0 ? DpReduceIssue::per_chunk : DpReduceIssue::at_end;
      in.threads_per_rank = 2;
      auto table = make_schedule(kind, p, v, m);
      ASSERT_TRUE(table.ok()) << table.error_text();
      const auto dedicated = simulate(*table, in);  // shared_processors 0: the dedicated model
      ASSERT_TRUE(dedicated.ok()) << dedicated.error_text();
      SimulationInput roomy = in;
      roomy.shared_processors = 2 * p;  // a processor for every thread
      auto costs = to_ns_costs(roomy, static_cast<std::size_t>(table->stages()));
      ASSERT_TRUE(costs.ok()) << costs.error_text();
      const auto shared_run = simulate_shared(*table, roomy, std::move(costs).value());
      ASSERT_TRUE(shared_run.ok()) << shared_run.error_text();
      const SimulationResult& a = *dedicated;
      const SimulationResult& b = *shared_run;
      EXPECT_EQ(a.iteration_ns, b.iteration_ns);
      EXPECT_EQ(a.busy_ns, b.busy_ns);
      EXPECT_EQ(a.compute_end_ns, b.compute_end_ns);
      EXPECT_EQ(a.reduce_wait_ns, b.reduce_wait_ns);
      EXPECT_EQ(a.bubble_ns, b.bubble_ns);
      ASSERT_EQ(a.timeline.tracks.size(), b.timeline.tracks.size());
      for (std::size_t t = 0; t < a.timeline.tracks.size(); ++t) {
        const auto& sa = a.timeline.tracks[t].spans;
        const auto& sb = b.timeline.tracks[t].spans;
        ASSERT_EQ(sa.size(), sb.size()) << "track " << t;
        for (std::size_t i = 0; i < sa.size(); ++i) {
          EXPECT_EQ(sa[i].start_ns, sb[i].start_ns) << "track " << t << " span " << i;
          EXPECT_EQ(sa[i].duration_ns, sb[i].duration_ns) << "track " << t << " span " << i;
          EXPECT_EQ(a.timeline.name_of(sa[i]), b.timeline.name_of(sb[i])) << "track " << t << " span " << i;
        }
      }
    }
  }
}

TEST(SharedProcessorSimulator, OneRankWithMoreThreadsThanProcessorsSlowsByTheirRatio) {
  // One pipeline rank, 4 identical threads on 2 processors: every op at half speed.
  const auto r = run(PipelineSchedule::one_f_one_b, 1, 1, 3, shared(uniform(1, 2), 2, 4, 1));
  EXPECT_EQ(r.iteration_ns, 2 * (3 * 3 + 1) * kMsNs);
}

TEST(SharedProcessorSimulator, TwoStagesOnOneProcessorSerialiseAllWork) {
  // GPipe, p = 2, m = 2, F = 1 ms, B = 2 ms per stage, one processor for two single-thread
  // ranks. By hand: F0.0 alone [0,1]; F0.1 and F1.0 share [1,3] (each 1 ms of work at 1/2);
  // F1.1 alone [3,4]; B1.0 alone [4,6]; B1.1 and B0.0 share [6,10]; B0.1 alone [10,12].
  // Total work 2 x (2 + 4) = 12 ms on one processor, never idle: 12 ms.
  const auto r = run(PipelineSchedule::gpipe, 2, 1, 2, shared(uniform(1, 2), 1, 1));
  EXPECT_EQ(r.iteration_ns, 12 * kMsNs);
}

TEST(SharedProcessorSimulator, IterationIsBoundedByWorkOverProcessors) {
  // 1F1B, p = 4, m = 8, 2 threads per rank on 2 processors: 8x oversubscribed in the steady
  // state. The iteration is at least all threads' work over the processors and at least the
  // unshared critical path.
  const ChunkCost cost = uniform(1, 2);
  const auto plain = run(PipelineSchedule::one_f_one_b, 4, 1, 8, shared(cost, 0, 1));
  const auto r = run(PipelineSchedule::one_f_one_b, 4, 1, 8, shared(cost, 2, 2));
  const double work_ns = 4.0 * 2.0 * 8.0 * 3.0 * kMsNs;  // ranks x threads x micro-batches x (F + B)
  EXPECT_GE(static_cast<double>(r.iteration_ns), work_ns / 2.0 - 1);
  EXPECT_GE(r.iteration_ns, plain.iteration_ns);
  // Work conserving: the processors idle only while fewer than 2 threads can compute, which is
  // at most the unshared schedule's bubble.
  EXPECT_LE(static_cast<double>(r.iteration_ns), work_ns / 2.0 + static_cast<double>(plain.bubble_ns[0]));
}

TEST(SharedProcessorSimulator, CommunicationKeepsItsTimeAndTakesNoShare) {
  // A TP collective inside the op (1 ms on the communication lane) while the other rank
  // computes: the computing rank runs at full speed meanwhile.
  ChunkCost c = uniform(1, 2);
  c.forward.segments.push_back(OpSegment{Lane::communication, 1 * kMs, 0, 0});
  const auto r = run(PipelineSchedule::gpipe, 1, 1, 1, shared(c, 1, 2));
  // One rank, 2 threads on 1 processor: F compute 2 ms, collective 1 ms, B compute 4 ms.
  EXPECT_EQ(r.iteration_ns, 7 * kMsNs);
}

TEST(SharedProcessorSimulator, BadSharingInputsAreErrors) {
  auto table = make_schedule(PipelineSchedule::gpipe, 2, 1, 2);
  ASSERT_TRUE(table.ok());
  SimulationInput in = shared(uniform(1, 2), -1, 1);
  auto r = simulate(*table, in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error_text().find("simulation.shared_processors"), std::string::npos) << r.error_text();
  in = shared(uniform(1, 2), 2, 0);
  r = simulate(*table, in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error_text().find("simulation.threads_per_rank"), std::string::npos) << r.error_text();
}

}  // namespace
}  // namespace plansight::estimator
