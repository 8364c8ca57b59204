// DualPipe (pipeline_schedule.h): DeepSeek-V3's bidirectional schedule with two model copies.
// The table against dualpipe.py (each half of the ranks plays DualPipeV's phases towards the
// middle), the two pipelines' placement, the stored micro-batches at the peak (the DualPipe
// README's "PP+1"), the simulated iteration against the README's bubble, and the plan around it:
// two copies of the parameters, an embedding and a head on both end ranks.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/presets.h"
#include "two_chunk_schedules.h"
#include "plansight/estimator/time_model.h"

namespace plansight::estimator {
namespace {

constexpr std::int64_t kMsNs = 1'000'000;

bool has_error_at(const std::vector<Diagnostic>& diagnostics, const std::string& field) {
  for (const Diagnostic& d : diagnostics) {
    if (d.severity == Severity::error && d.field == field) return true;
  }
  return false;
}

TEST(DualPipe, EachHalfOfTheRanksRunsDualPipeVsPhasesTowardsTheMiddle) {
  // dualpipe.py's DualPipe.step is dualpipev.py's DualPipeV.step with rank -> half_rank
  // (min(r, p-1-r)), num_ranks -> num_ranks / 2, num_chunks -> num_chunks / 2 per direction and
  // "is_last_rank" -> "is_middle_rank"; phase 0 is the direction that starts at the rank's end.
  for (std::int32_t p : {2, 4, 6, 8}) {
    for (std::int32_t m : {2 * p, 2 * p + 2, 6 * p}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      auto t = make_schedule(PipelineSchedule::dualpipe, p, 2, m);
      ASSERT_TRUE(t.ok()) << t.error_text();
      EXPECT_TRUE(t->split_backward);
      EXPECT_TRUE(check_schedule(*t).empty()) << join_messages(check_schedule(*t));
      auto v = make_schedule(PipelineSchedule::dualpipev, p / 2, 2, m / 2);
      ASSERT_TRUE(v.ok());
      for (std::int32_t r = 0; r < p; ++r) {
        const bool lower = r < p / 2;
        const auto& ops = t->ranks[static_cast<std::size_t>(r)];
        const auto& vops = v->ranks[static_cast<std::size_t>(lower ? r : p - 1 - r)];
        ASSERT_EQ(ops.size(), vops.size());
        EXPECT_EQ(ops.size(), static_cast<std::size_t>(3 * m));  // m/2 micro-batches through each of two chunks
        for (std::size_t i = 0; i < ops.size(); ++i) {
          const std::int32_t chunk = lower ? vops[i].chunk : 1 - vops[i].chunk;
          EXPECT_EQ(ops[i].kind, vops[i].kind);
          EXPECT_EQ(ops[i].chunk, chunk);
          EXPECT_EQ(ops[i].micro_batch, vops[i].micro_batch + (chunk == 1 ? m / 2 : 0));
          EXPECT_EQ(ops[i].pairs_with_next, vops[i].pairs_with_next);
        }
      }
    }
  }
}

TEST(DualPipe, TwoPipelinesRunOppositeWaysAndEveryRankStoresPPlusOne) {
  for (std::int32_t p : {2, 4, 8}) {
    const std::int32_t m = 4 * p;
    auto t = make_schedule(PipelineSchedule::dualpipe, p, 2, m);
    ASSERT_TRUE(t.ok()) << t.error_text();
    for (std::int32_t r = 0; r < p; ++r) {
      // Rank r: stage r of the first copy, stage p-1-r of the second (global chunk p + that).
      EXPECT_EQ(t->global_chunk(r, 0), r);
      EXPECT_EQ(t->global_chunk(r, 1), 2 * p - 1 - r);
      EXPECT_TRUE(t->passes(r, 0));
      EXPECT_FALSE(t->passes(r, m / 2));
      EXPECT_TRUE(t->passes(2 * p - 1 - r, m / 2));
      // The DualPipe README: PP + 1 = p + 1 stored chunk-micro-batches per device.
      const auto peak = in_flight_at_peak(t->ranks[static_cast<std::size_t>(r)], true, {1.0, 1.0});
      EXPECT_EQ(peak[0] + peak[1], p + 1) << "rank " << r;
    }
    EXPECT_TRUE(starts_pipeline(PipelineSchedule::dualpipe, p, 0));
    EXPECT_TRUE(starts_pipeline(PipelineSchedule::dualpipe, p, p));
    EXPECT_TRUE(ends_pipeline(PipelineSchedule::dualpipe, p, 2, p - 1));
    EXPECT_TRUE(ends_pipeline(PipelineSchedule::dualpipe, p, 2, 2 * p - 1));
    EXPECT_FALSE(ends_pipeline(PipelineSchedule::dualpipev, p, 2, p - 1));
  }
  // A micro-batch of the wrong pipeline on a chunk is a malformed table.
  ScheduleTable t = *make_schedule(PipelineSchedule::dualpipe, 2, 2, 4);
  t.ranks[0][0].micro_batch = 3;
  EXPECT_FALSE(check_schedule(t).empty());
}

SimulationResult simulate_uniform(std::int64_t p, std::int64_t m, int f_ms, int b_ms, int w_ms, double send_ms = 0) {
  return test::simulate_uniform_chunks(PipelineSchedule::dualpipe, p, 2, m, f_ms, b_ms, w_ms, send_ms);
}

TEST(DualPipe, SimulatedBubbleIsTheReadmes) {
  // DualPipe README, "Pipeline Bubbles and Memory Usage Comparison": DualPipe's bubble with PP
  // ranks is (PP/2 - 1)(F&B + B - 3W), B a full backward. With equal F and B and no separate W
  // (F&B = F + B unoverlapped) that is (p/2 - 1)(F + 2B) beside each rank's m(F + B) of work
  // (m/2 micro-batches through each of its two chunks). Otherwise at or below the README's.
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t m : {2 * p, 3 * p + 2, 6 * p}) {
      for (auto [f, b, w] : {std::tuple{1, 1, 0}, std::tuple{2, 2, 0}, std::tuple{1, 2, 0}, std::tuple{1, 2, 1}}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) + " F,B,W=" + std::to_string(f) + "," +
                     std::to_string(b) + "," + std::to_string(w));
        const auto r = simulate_uniform(p, m, f, b, w);
        const std::int64_t work = m * (f + b + w) * kMsNs;
        const std::int64_t readme = (p / 2 - 1) * (f + 2 * (b + w) - 3 * w) * kMsNs;
        if (w == 0 && f == b) {
          EXPECT_EQ(r.iteration_ns - work, readme);
        } else {
          EXPECT_LE(r.iteration_ns - work, readme);
        }
      }
    }
  }
  // Transfers delay it and never deadlock it.
  EXPECT_GT(simulate_uniform(4, 12, 1, 2, 1, 0.25).iteration_ns, simulate_uniform(4, 12, 1, 2, 1).iteration_ns);
}

TEST(DualPipe, ScheduleErrorsNameTheFieldToChange) {
  for (auto [p, v, m, field] : {std::tuple{3, 2, 12, "layout.pp"}, std::tuple{4, 1, 8, "layout.vpp"},
                                std::tuple{4, 2, 6, "training.global_batch"}, std::tuple{4, 2, 9, "training.global_batch"}}) {
    auto t = make_schedule(PipelineSchedule::dualpipe, p, v, m);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error_text().find(field), std::string::npos) << t.error_text();
  }
}

Plan dualpipe_plan() { return test::two_chunk_plan(PipelineSchedule::dualpipe); }

TEST(DualPipe, TwoCopiesOfTheParametersAndAHeadOnBothEnds) {
  Plan plan = dualpipe_plan();
  ASSERT_FALSE(has_errors(validate(plan))) << join_messages(validate(plan));
  // Each copy spans the 8 stages: 12 layers per chunk, 24 per rank.
  const auto layers = chunk_layers(plan);
  ASSERT_EQ(layers.size(), 16u);
  for (std::int64_t n : layers) EXPECT_EQ(n, 12);
  // Every rank stores p + 1 = 9 chunk-micro-batches of 12 layers.
  for (std::int64_t r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(in_flight_layer_equivalents(plan, r, layers), 9 * 12.0);
  const auto [dual, one] = test::estimate_beside_one_f_one_b(plan);
  const auto& d = dual.memory.stages;
  const auto& o = one.memory.stages;
  ASSERT_EQ(d.size(), 8u);
  ASSERT_EQ(o.size(), 8u);
  // A middle rank holds two stages' layers: twice 1F1B's (DeepSeek-V3 report, Sec. 3.2.1: "two
  // copies of the model parameters").
  EXPECT_DOUBLE_EQ(d[3].parameters, 2 * o[3].parameters);
  // Both end ranks have an embedding and a head (tied: one copy each), and the same count.
  EXPECT_GT(d[0].parameters, d[3].parameters);
  EXPECT_DOUBLE_EQ(d[0].parameters, d[7].parameters);
  // The same work per rank, a bubble of (p/2 - 1) against 1F1B's (p - 1) passes.
  EXPECT_DOUBLE_EQ(dual.flops.model_per_iteration, one.flops.model_per_iteration);
  EXPECT_LT(dual.time.bubble_fraction, one.time.bubble_fraction);
  EXPECT_GT(dual.time.iteration_s, 0);
  // The closed form the search would use stays near the simulation.
  const TimePrediction closed = predict_time_closed_form(plan, dual.padded_vocab, nullptr);
  EXPECT_NEAR(closed.iteration_s, dual.time.iteration_s, 0.05 * dual.time.iteration_s);
}

TEST(DualPipe, PlanFilesAndValidationSpeakOfIt) {
  Plan plan = dualpipe_plan();
  test::expect_plan_files_keep_two_chunks(PipelineSchedule::dualpipe);
  EXPECT_EQ(parse_enum<PipelineSchedule>("DualPipe"), PipelineSchedule::dualpipe);
  EXPECT_EQ(to_string(PipelineSchedule::dualpipe), "dualpipe");
  // Odd pp, an odd or too small number of micro-batches, layers pp does not divide, stage_layers.
  Plan odd = plan;
  odd.layout.pp = 3;
  EXPECT_TRUE(has_error_at(validate(odd), "layout.pp")) << join_messages(validate(odd));
  Plan few = plan;
  few.training.global_batch = few.training.micro_batch * few.dp() * 14;  // m = 14 < 2 * 8
  EXPECT_TRUE(has_error_at(validate(few), "training.global_batch")) << join_messages(validate(few));
  Plan uneven = plan;
  uneven.model.layers = 92;
  EXPECT_TRUE(has_error_at(validate(uneven), "layout.pp")) << join_messages(validate(uneven));
  // stage_layers gives one copy's pp stages; the other copy mirrors them.
  Plan staged = plan;
  staged.layout.stage_layers.assign(16, 6);
  EXPECT_TRUE(has_error_at(validate(staged), "layout.stage_layers")) << join_messages(validate(staged));
  staged.layout.stage_layers = {11, 12, 12, 12, 12, 12, 12, 13};
  staged.model.layers = 96;
  ASSERT_FALSE(has_errors(validate(staged))) << join_messages(validate(staged));
  const auto layers = chunk_layers(staged);
  ASSERT_EQ(layers.size(), 16u);
  for (std::size_t s = 0; s < 8; ++s) {
    EXPECT_EQ(layers[s], staged.layout.stage_layers[s]);
    EXPECT_EQ(layers[8 + s], staged.layout.stage_layers[s]);
  }
  // Rank 0 holds stage 0 of the first copy and stage 7 of the second: 11 + 13 layers.
  auto e = estimate(staged);
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_EQ(e->memory.stages[0].layers, 24);
  EXPECT_EQ(e->memory.stages[7].layers, 24);
}

}  // namespace
}  // namespace plansight::estimator
