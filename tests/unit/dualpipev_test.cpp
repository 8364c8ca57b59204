// DualPipeV (pipeline_schedule.h): the table against DeepSeek-AI's dualpipev.py phase by phase,
// the V-shaped chunk placement, the stored micro-batches at the peak (the DualPipe README's
// "PP+1"), the simulated iteration against the README's bubble, and the plan around it.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/presets.h"
#include "two_chunk_schedules.h"

namespace plansight::estimator {
namespace {

constexpr double kMs = 1e-3;
constexpr std::int64_t kMsNs = 1'000'000;

std::string ops_text(const std::vector<ScheduleOp>& ops) {
  std::string out;
  for (const ScheduleOp& o : ops) {
    if (!out.empty()) out += ' ';
    out += op_letter(o.kind) + std::to_string(o.chunk) + "." + std::to_string(o.micro_batch) + (o.pairs_with_next ? "+" : "");
  }
  return out;
}

TEST(DualPipeV, TableFollowsTheReferencePhaseByPhase) {
  // Hand-derived from dualpipev.py's DualPipeV.step for 2 ranks and 4 micro-batches ("X.k": op
  // X of local chunk, micro-batch k; "+": waits for the next op's input too). Rank 0: phase 1
  // two F0; phase 2 one (F0, F1); phase 3 one (B1 deferred, W, F1); phase 4 one (F0 B1, F1 B0);
  // phase 5 one (B1, F1 B0); phase 6 one (B1, B0 deferred); phase 7 one (W, B0 deferred);
  // phase 8 one W. Rank 1 (the last): phase 2 twice, phase 4 twice (its first pair not
  // overlapped), phase 6 twice (both Bs of the second deferred, rank 1 being odd), two Ws.
  auto t = make_schedule(PipelineSchedule::dualpipev, 2, 2, 4);
  ASSERT_TRUE(t.ok()) << t.error_text();
  EXPECT_TRUE(t->split_backward);
  EXPECT_EQ(ops_text(t->ranks[0]),
            "F0.0 F0.1 F0.2 F1.0 B1.0 W1.0+ F1.1 F0.3+ B1.1 W1.1 F1.2+ B0.0 W0.0 B1.2 W1.2 F1.3+ B0.1 W0.1 "
            "B1.3 W1.3 B0.2 W0.2 B0.3 W0.3");
  EXPECT_EQ(ops_text(t->ranks[1]),
            "F0.0 F1.0+ F0.1 F1.1 F0.2 B1.0 W1.0 F1.2+ B0.0 W0.0 F0.3+ B1.1 W1.1 F1.3+ B0.1 W0.1 "
            "B1.2 W1.2 B0.2 W0.2 B1.3 B0.3 W1.3 W0.3");
  EXPECT_TRUE(check_schedule(*t).empty());
}

TEST(DualPipeV, ChunksSitInAVAndEveryRankStoresTwoPPlusOne) {
  for (std::int32_t p : {1, 2, 3, 4, 8}) {
    for (std::int32_t m : {2 * p, 2 * p + 1, 5 * p}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      auto t = make_schedule(PipelineSchedule::dualpipev, p, 2, m);
      ASSERT_TRUE(t.ok()) << t.error_text();
      EXPECT_TRUE(check_schedule(*t).empty());
      for (std::int32_t r = 0; r < p; ++r) {
        EXPECT_EQ(t->global_chunk(r, 0), r);
        EXPECT_EQ(t->global_chunk(r, 1), 2 * p - 1 - r);  // rank 0 holds the first and the last chunk
        EXPECT_EQ(t->rank_of(t->global_chunk(r, 1)), r);
        EXPECT_EQ(t->ranks[static_cast<std::size_t>(r)].size(), static_cast<std::size_t>(6 * m));
        // The DualPipe README: activations of PP + 1 = 2p + 1 chunk-micro-batches per device;
        // memory.cpp's closed form 2p - r of chunk 0 and r + 1 of chunk 1.
        const auto peak = in_flight_at_peak(t->ranks[static_cast<std::size_t>(r)], true, {1.0, 1.0});
        EXPECT_EQ(peak[0], 2 * p - r);
        EXPECT_EQ(peak[1], r + 1);
      }
    }
  }
}

SimulationResult simulate_uniform(std::int64_t p, std::int64_t m, int f_ms, int b_ms, int w_ms, double send_ms = 0) {
  return test::simulate_uniform_chunks(PipelineSchedule::dualpipev, p, 2, m, f_ms, b_ms, w_ms, send_ms);
}

TEST(DualPipeV, SimulatedBubbleIsTheReadmesWithoutASeparateW) {
  // DualPipe README, "Pipeline Bubbles and Memory Usage Comparison": DualPipeV's bubble with PP
  // stages is (PP/2 - 1)(F&B + B - 3W), B a full backward. With equal F and B and no separate W
  // pass (W = 0, F&B = F + B unoverlapped) that is (p - 1)(F + 2B) on p ranks: for p = 2, m = 4,
  // F = B = 1 ms the iteration is 2 x 4 x 2 + 3 = 19 ms. Otherwise the simulated bubble stays at
  // or below the README's (p - 1)(F + 2(B + W) - 3W): the formula is the schedule's bound, and
  // the table's order lets a shorter F or a W fill a little more.
  EXPECT_EQ(simulate_uniform(2, 4, 1, 1, 0).iteration_ns, 19 * kMsNs);
  for (std::int64_t p : {2, 3, 4, 8}) {
    for (std::int64_t m : {2 * p, 3 * p + 1, 6 * p}) {
      for (auto [f, b, w] : {std::tuple{1, 1, 0}, std::tuple{1, 2, 0}, std::tuple{2, 3, 0}, std::tuple{1, 1, 1},
                             std::tuple{1, 2, 1}, std::tuple{2, 3, 1}}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) + " F,B,W=" + std::to_string(f) + "," +
                     std::to_string(b) + "," + std::to_string(w));
        const auto r = simulate_uniform(p, m, f, b, w);
        const std::int64_t work = 2 * m * (f + b + w) * kMsNs;
        const std::int64_t readme = (p - 1) * (f + 2 * (b + w) - 3 * w) * kMsNs;
        if (w == 0 && f == b) {
          EXPECT_EQ(r.iteration_ns - work, readme);
        } else {
          EXPECT_LE(r.iteration_ns - work, readme);
          EXPECT_GE(r.iteration_ns - work, (p - 1) * f * kMsNs);  // the fill's forwards are never hidden
        }
      }
    }
  }
}

TEST(DualPipeV, ShrinksOneFOneBsBubbleOnTheSameRanks) {
  // The same model on p ranks: 1F1B runs a stage of two chunks' layers (F = B = 2 ms), DualPipeV
  // the two chunks (F = B = 1 ms each): (p - 1)(F + B) = 4(p - 1) ms of bubble against the
  // README's (p - 1)(F + 2B) = 3(p - 1) ms.
  for (std::int64_t p : {2, 4, 8}) {
    const std::int64_t m = 4 * p;
    auto t = make_schedule(PipelineSchedule::one_f_one_b, p, 1, m);
    ASSERT_TRUE(t.ok());
    ChunkCost stage;
    stage.forward = compute_cost(2 * kMs);
    stage.backward = compute_cost(2 * kMs);
    auto f1b = simulate(*t, SimulationInput{{stage}});
    ASSERT_TRUE(f1b.ok());
    const auto dpv = simulate_uniform(p, m, 1, 1, 0);
    EXPECT_EQ(f1b->iteration_ns - m * 4 * kMsNs, (p - 1) * 4 * kMsNs);
    EXPECT_EQ(dpv.iteration_ns - m * 4 * kMsNs, (p - 1) * 3 * kMsNs);
  }
}

TEST(DualPipeV, TransfersDelayButNeverDeadlock) {
  for (std::int64_t p : {2, 3, 4}) {
    const auto free = simulate_uniform(p, 3 * p, 1, 2, 1);
    const auto slow = simulate_uniform(p, 3 * p, 1, 2, 1, 0.25);
    EXPECT_GT(slow.iteration_ns, free.iteration_ns);
  }
}

TEST(DualPipeV, ScheduleErrorsNameTheFieldToChange) {
  auto v1 = make_schedule(PipelineSchedule::dualpipev, 4, 1, 8);
  ASSERT_FALSE(v1.ok());
  EXPECT_NE(v1.error_text().find("layout.vpp"), std::string::npos) << v1.error_text();
  auto few = make_schedule(PipelineSchedule::dualpipev, 4, 2, 7);
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.error_text().find("training.global_batch"), std::string::npos) << few.error_text();
  EXPECT_NE(few.error_text().find("m >= 2 * pp = 8"), std::string::npos) << few.error_text();
  ScheduleTable t = *make_schedule(PipelineSchedule::dualpipev, 2, 2, 4);
  t.ranks[1].back().pairs_with_next = true;
  ASSERT_FALSE(check_schedule(t).empty());
}

Plan dualpipev_plan() { return test::two_chunk_plan(PipelineSchedule::dualpipev); }

TEST(DualPipeV, MemoryPutsTheHeadOnRankZeroAndStoresTwoPPlusOneChunks) {
  Plan plan = dualpipev_plan();
  ASSERT_FALSE(has_errors(validate(plan))) << join_messages(validate(plan));
  ASSERT_EQ(plan.model.layers % 16, 0);
  const double per_chunk = static_cast<double>(plan.model.layers / 16);
  // Every rank: (2p - r) + (r + 1) = 17 chunk-micro-batches of `per_chunk` layers.
  for (std::int64_t r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(in_flight_layer_equivalents(plan, r, chunk_layers(plan)), 17 * per_chunk);
  // Rank 0 has the embedding and the head; with tied embeddings no second copy of them.
  const auto [e, f] = test::estimate_beside_one_f_one_b(plan);
  const auto& v_stages = e.memory.stages;
  const auto& f_stages = f.memory.stages;
  ASSERT_EQ(v_stages.size(), 8u);
  ASSERT_EQ(f_stages.size(), 8u);
  EXPECT_GT(v_stages[0].parameters, v_stages[1].parameters);
  EXPECT_DOUBLE_EQ(v_stages[7].parameters, v_stages[1].parameters);  // no head on the last rank
  EXPECT_GT(f_stages[7].parameters, f_stages[6].parameters);         // 1F1B's head is there
  EXPECT_GT(e.time.iteration_s, 0);
  EXPECT_LT(e.time.bubble_fraction, f.time.bubble_fraction);
}

TEST(DualPipeV, PlanFilesAndValidationSpeakOfIt) {
  Plan plan = dualpipev_plan();
  // "schedule": "dualpipev" alone means two virtual stages.
  test::expect_plan_files_keep_two_chunks(PipelineSchedule::dualpipev);
  Plan wrong = plan;
  wrong.layout.vpp = 3;
  EXPECT_NE(join_messages(validate(wrong)).find("layout.vpp"), std::string::npos);
  Plan few = plan;
  few.training.global_batch = few.training.micro_batch * few.dp() * 15;
  const std::string text = join_messages(validate(few));
  EXPECT_NE(text.find("dualpipev needs at least 2 * pp = 16"), std::string::npos) << text;
}

}  // namespace
}  // namespace plansight::estimator
