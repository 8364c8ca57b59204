// What an estimate allocates when it runs again on the same thread: the simulator keeps its
// per-run arrays on the thread (iteration_engine.cpp), so a repeated estimate of a large plan
// makes no large allocation. Each allocation of this size is a fresh mapping that glibc hands
// back on free (its mmap threshold: 128 KiB by default, dynamic above), and touching it again
// costs page faults: a ZeRO-3, 64-stage interleaved estimate whose decision records were
// allocated per run took about 400 page faults an estimate (`perf stat -e page-faults`), a
// third of its time on the 2-core machine of bench/results/time-core-cpu.txt.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "trillion_test_plans.h"

namespace {

// Counted on the test's thread only, between start() and stop().
thread_local bool counting = false;
thread_local std::size_t large_allocations = 0, large_bytes = 0, allocations = 0;
constexpr std::size_t kLarge = std::size_t{128} << 10;

}  // namespace

void* operator new(std::size_t n) {
  if (counting) {
    ++allocations;
    if (n >= kLarge) {
      ++large_allocations;
      large_bytes += n;
    }
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace plansight::estimator {
namespace {

// The 1 T model on 64 stages x 4 chunks, 1024 micro-batches, ZeRO-3 without prefetch: its
// steady-state search records the decisions between ranks for two periods (about 33,000 a
// period), the largest per-run array after the pair times.
Plan zero3_interleaved() { return trillion_64_stages_zero3(PipelineSchedule::interleaved, 4); }

TEST(EngineAllocation, ARepeatedLargeEstimateMakesNoLargeAllocation) {
  const Plan plan = zero3_interleaved();
  EstimateOptions options;
  options.parallel_simulations = false;  // both simulations on this thread, whose arrays it keeps
  const auto first = estimate(plan, options);
  ASSERT_TRUE(first.ok()) << first.error_text();
  ASSERT_TRUE(first->time.simulated);
  counting = true;
  const auto again = estimate(plan, options);
  counting = false;
  ASSERT_TRUE(again.ok()) << again.error_text();
  EXPECT_EQ(again->time.iteration_s, first->time.iteration_s);
  EXPECT_EQ(large_allocations, 0u) << large_bytes << " bytes in allocations of 128 KiB or more";
}

// The plan's 256 chunks cost three ways (its first, its middle ones, its last): each is built
// once and shared by the chunks alike (IterationCosts::chunk_of), not built, converted for each
// simulation and freed 256 times. Built per chunk, an estimate of it made 4,988 allocations on
// its two threads, now 387 (bench/results/time-core-cpu.txt, 2026-11-28, fourth); here, both
// simulations on this thread, about 310.
TEST(EngineAllocation, AlikeChunksCostOneAllocationNotOneEach) {
  const Plan plan = zero3_interleaved();
  EstimateOptions options;
  options.parallel_simulations = false;
  ASSERT_TRUE(estimate(plan, options).ok());
  allocations = 0;
  counting = true;
  const auto again = estimate(plan, options);
  counting = false;
  ASSERT_TRUE(again.ok()) << again.error_text();
  EXPECT_LT(allocations, 800u) << "allocations in one estimate";
}

}  // namespace
}  // namespace plansight::estimator
