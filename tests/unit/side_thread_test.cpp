// SideJob (side_thread.h) and predict_time()'s second simulation beside the first: the job runs,
// under the caller's cancellation flag, and rethrows what it threw; which schedules are long
// enough to use it; an estimate of one gives the same figures whichever thread runs its
// free-transfer simulation.
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

// How much of a table a run simulates one by one, which decides whether the second simulation
// goes to the side thread: every op where nothing can be skipped, else about 10 p v per rank.
TEST(PredictTime, ExpectedSimulatedOpsFollowTheSkipRules) {
  const auto ops = [](PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m) {
    auto t = make_schedule(kind, p, v, m);
    EXPECT_TRUE(t.ok()) << t.error_text();
    return t.ok() ? expected_simulated_ops(*t) : -1;
  };
  EXPECT_EQ(ops(PipelineSchedule::gpipe, 64, 1, 1024), 2 * 64 * 1024) << "GPipe: skipped only as its costs allow";
  EXPECT_EQ(ops(PipelineSchedule::one_f_one_b, 64, 1, 128), 2 * 64 * 128) << "too few micro-batches to skip";
  EXPECT_EQ(ops(PipelineSchedule::one_f_one_b, 64, 1, 1024), 10 * 64 * 64);
  EXPECT_EQ(ops(PipelineSchedule::interleaved, 64, 4, 1024), 10 * 64 * 64 * 4);
  EXPECT_EQ(ops(PipelineSchedule::one_f_one_b, 8, 1, 1024), 10 * 8 * 8) << "the default plan's depth: short runs";
  // predict_time decides before it makes a table (each run makes its own): the same counts from
  // the schedule's kind and size alone.
  for (const auto& [kind, p, v, m] : {std::tuple{PipelineSchedule::gpipe, 64, 1, 1024}, {PipelineSchedule::one_f_one_b, 64, 1, 128},
                                      {PipelineSchedule::one_f_one_b, 64, 1, 1024}, {PipelineSchedule::interleaved, 64, 4, 1024},
                                      {PipelineSchedule::zb_h1, 16, 1, 512}, {PipelineSchedule::dualpipev, 32, 2, 256},
                                      {PipelineSchedule::dualpipe, 16, 2, 256}}) {
    EXPECT_EQ(expected_simulated_ops(kind, p, v, m), ops(kind, p, v, m)) << to_string(kind) << " " << p << " x " << m;
  }
}

// 64 stages x 4 virtual stages x 256 micro-batches, 1F1B with 1024 micro-batches, the same with
// ZeRO-3 (its gathers inside every op), and DualPipe (simulated as its mirrored lower half), all
// expected to simulate more ops than the side thread's threshold: every figure of the estimate
// is the same with the second simulation beside the first, on a table of its own, and with both
// on the caller's thread, on one table.
TEST(PredictTime, ParallelSimulationsGiveTheSameFigures) {
  for (const auto& [schedule, vpp, micro_batches, zero] :
       {std::tuple{PipelineSchedule::interleaved, 4, 256, 1}, std::tuple{PipelineSchedule::one_f_one_b, 1, 1024, 1},
        std::tuple{PipelineSchedule::one_f_one_b, 1, 1024, 3}, std::tuple{PipelineSchedule::dualpipe, 2, 512, 1}}) {
    Plan plan = pp64_plan(schedule, vpp, micro_batches);
    plan.layout.zero_stage = zero;
    plan.training.zero3_prefetch = false;
    SCOPED_TRACE(std::string(to_string(schedule)) + " ZeRO-" + std::to_string(zero));
    auto table = make_schedule(plan.layout, plan.micro_batches());
    ASSERT_TRUE(table.ok());
    ASSERT_GE(expected_simulated_ops(*table), 16384);
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
