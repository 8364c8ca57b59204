// SideJob (side_thread.h), which makes a long schedule table on two threads: the job runs, under
// the caller's cancellation flag, and rethrows what it threw; an estimate gives the same figures
// whether its table was made on one thread or two.
#include "side_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "plansight/estimator/cancellation.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/time_model.h"
#include "simulation_costs.h"
#include "trillion_test_plans.h"

namespace plansight::estimator {
namespace {

TEST(SideJob, RunsTheJobOnceBeforeWaitReturns) {
  int runs = 0;
  SideJob job([&] { ++runs; });
  job.wait();
  EXPECT_EQ(runs, 1);
  job.wait();  // a second wait runs nothing
  EXPECT_EQ(runs, 1);
}

TEST(SideJob, RunsBesideTheCallerWhenTheMachineHasASecondCore) {
  if (!side_thread_useful()) GTEST_SKIP() << "one hardware thread: every job runs on the caller's thread";
  std::thread::id ran_on;
  SideJob job([&] { ran_on = std::this_thread::get_id(); });
  job.wait();
  EXPECT_TRUE(job.on_side_thread());
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(SideJob, ASecondJobWhileTheFirstHoldsTheThreadRunsOnTheCaller) {
  std::atomic<bool> release{false};
  SideJob first([&] {
    while (!release.load()) std::this_thread::yield();
  });
  std::thread::id ran_on;
  SideJob second([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_FALSE(second.on_side_thread());
  second.wait();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  release = true;
  first.wait();
}

TEST(SideJob, SeesTheCallersCancellationFlag) {
  std::atomic<bool> cancel{true};
  const CancelScope scope(&cancel);
  bool seen = false;
  SideJob job([&] { seen = cancel_requested(); });
  job.wait();
  EXPECT_TRUE(seen);
}

TEST(SideJob, WaitRethrowsWhatTheJobThrew) {
  SideJob job([] { throw std::runtime_error("job failed"); });
  EXPECT_THROW(job.wait(), std::runtime_error);
  // The thread is free again for the next job.
  int runs = 0;
  SideJob next([&] { ++runs; });
  next.wait();
  EXPECT_EQ(runs, 1);
}

// Narayanan et al.'s 1 T model with 256 layers on 3072 GPUs: TP 8 x PP 64, DP 6.
Plan pp64_plan(PipelineSchedule schedule, std::int64_t vpp, std::int64_t micro_batches) {
  return trillion_64_stages(schedule, vpp, micro_batches);
}

// 64 stages x 4 virtual stages x 256 micro-batches, 1F1B with 1024 micro-batches, the same with
// ZeRO-3 (its gathers inside every op), and DualPipe (simulated as its mirrored lower half):
// every figure of the estimate is the same with its table made on two threads and on one.
TEST(PredictTime, ParallelSimulationsGiveTheSameFigures) {
  for (const auto& [schedule, vpp, micro_batches, zero] :
       {std::tuple{PipelineSchedule::interleaved, 4, 256, 1}, std::tuple{PipelineSchedule::one_f_one_b, 1, 1024, 1},
        std::tuple{PipelineSchedule::one_f_one_b, 1, 1024, 3}, std::tuple{PipelineSchedule::dualpipe, 2, 512, 1}}) {
    Plan plan = pp64_plan(schedule, vpp, micro_batches);
    plan.layout.zero_stage = zero;
    plan.training.zero3_prefetch = false;
    SCOPED_TRACE(std::string(to_string(schedule)) + " ZeRO-" + std::to_string(zero));
    EstimateOptions serial, parallel;
    serial.parallel_simulations = false;
    const auto a = estimate(plan, serial);
    const auto b = estimate(plan, parallel);
    ASSERT_TRUE(a.ok()) << a.error_text();
    ASSERT_TRUE(b.ok()) << b.error_text();
    EXPECT_EQ(a->time.iteration_s, b->time.iteration_s);
    EXPECT_EQ(a->time.breakdown.bubble_s, b->time.breakdown.bubble_s);
    EXPECT_EQ(a->time.breakdown.pp_comm_s, b->time.breakdown.pp_comm_s);
    EXPECT_EQ(a->time.breakdown.dp_comm_s, b->time.breakdown.dp_comm_s);
    EXPECT_EQ(a->time.bubble_fraction, b->time.bubble_fraction);
    EXPECT_GT(a->time.breakdown.bubble_s, 0.0);
  }
}

// An estimate reuses the schedule table its thread made last when the schedule, stages, virtual
// stages and micro-batches are the same (time_model.cpp, kept_table), a sparse table's middle
// already written by the runs before: an edit of anything else gives the figures of an estimate
// made on a thread that kept nothing.
TEST(PredictTime, AnEditThatKeepsTheScheduleGivesTheFiguresOfAFreshEstimate) {
  const Plan first = pp64_plan(PipelineSchedule::interleaved, 4, 256);
  Plan edited = first;
  edited.layout.zero_stage = 3;  // the same table, other costs: ZeRO-3's gathers in every op
  edited.training.zero3_prefetch = false;
  Plan other = first;
  other.training.global_batch = 320 * 6;  // another table: more micro-batches
  EstimateOptions options;
  options.parallel_simulations = false;  // both runs on the calling thread, on its table
  // Each plan's figures from a thread that kept nothing.
  const auto fresh = [&](const Plan& plan) {
    Result<Estimate> e = make_error("test", "not run");
    std::thread([&] { e = estimate(plan, options); }).join();
    return e;
  };
  const auto expect_fresh_figures = [&](const Plan& plan, const Result<Estimate>& e, const char* what) {
    SCOPED_TRACE(what);
    const auto f = fresh(plan);
    ASSERT_TRUE(f.ok() && e.ok()) << f.error_text() << e.error_text();
    EXPECT_EQ(f->time.iteration_s, e->time.iteration_s);
    EXPECT_EQ(f->time.breakdown.bubble_s, e->time.breakdown.bubble_s);
    EXPECT_EQ(f->time.breakdown.pp_comm_s, e->time.breakdown.pp_comm_s);
    EXPECT_EQ(f->time.breakdown.dp_comm_s, e->time.breakdown.dp_comm_s);
    EXPECT_EQ(f->time.bubble_fraction, e->time.bubble_fraction);
    EXPECT_EQ(f->time.bubble_fraction_max, e->time.bubble_fraction_max);
  };
  const auto warm = estimate(first, options);  // makes and keeps the table, and writes its middle
  expect_fresh_figures(first, warm, "the first");
  expect_fresh_figures(edited, estimate(edited, options), "an edit that keeps the table");
  expect_fresh_figures(other, estimate(other, options), "an edit that needs another table");
  expect_fresh_figures(edited, estimate(edited, options), "back to the first table");
  const auto e = estimate(edited, options);
  ASSERT_TRUE(e.ok() && warm.ok());
  EXPECT_NE(warm->time.iteration_s, e->time.iteration_s) << "the edit changes the figures";
}

// The prediction says how much of the schedule its simulation skipped: without a timeline a long
// 1F1B run moves over most of its steady state, to the same figures as the run that keeps its
// timeline and so simulates every op.
TEST(PredictTime, ReportsTheOpsItsSimulationSkipped) {
  const Plan plan = pp64_plan(PipelineSchedule::one_f_one_b, 1, 1024);
  const auto e = estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  TimeModelOptions lean, kept;
  lean.keep_timeline = false;
  kept.keep_timeline = true;
  const auto a = predict_time(plan, e->padded_vocab, lean);
  const auto b = predict_time(plan, e->padded_vocab, kept);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->skipped_ops, schedule_ops(plan) * 3 / 4);
  EXPECT_LT(a->skipped_ops, schedule_ops(plan));
  EXPECT_EQ(b->skipped_ops, 0);
  EXPECT_EQ(a->iteration_s, b->iteration_s);
  EXPECT_EQ(a->breakdown.bubble_s, b->breakdown.bubble_s);
}

TEST(PredictTime, ACancelledEstimateStopsWithItsError) {
  std::atomic<bool> cancel{true};
  const CancelScope scope(&cancel);
  const auto e = estimate(pp64_plan(PipelineSchedule::one_f_one_b, 1, 1024));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error_text().find(kCancelledMessage), std::string::npos) << e.error_text();
}

}  // namespace
}  // namespace plansight::estimator
