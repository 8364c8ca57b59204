// The runtime's tracer (spans -> measured Timeline tracks per rank and lane, NVTX-style hooks)
// and memory accounting (categories sum to what was allocated; peak of the total is the peak of
// the sum, not the sum of peaks).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "plansight/runtime/memory_tracker.h"
#include "plansight/runtime/tracer.h"

namespace plansight::runtime {
namespace {

namespace est = plansight::estimator;

TEST(MemoryTracker, CategoriesSumToAllocations) {
  MemoryTracker m;
  {
    TrackedBuffer w(&m, MemoryCategory::weights, 100);
    TrackedBuffer g(&m, MemoryCategory::gradients, 50);
    EXPECT_EQ(m.current()[MemoryCategory::weights], 400);
    EXPECT_EQ(m.current().total(), 600);
    {
      TrackedBuffer a(&m, MemoryCategory::activations, 250);
      EXPECT_EQ(a.data()[249], 0.f);  // zero-initialised
      EXPECT_EQ(m.current().total(), 1600);
    }
    TrackedBuffer b(&m, MemoryCategory::buffers, 25);
    TrackedBuffer moved = std::move(b);
    EXPECT_EQ(m.current()[MemoryCategory::buffers], 100);
    EXPECT_EQ(m.peak()[MemoryCategory::activations], 1000);
    EXPECT_EQ(m.peak_total(), 1600);  // weights + grads + activations; buffers came later
    EXPECT_EQ(m.current().total(), 700);
    const auto breakdown = m.current().breakdown();
    EXPECT_DOUBLE_EQ(breakdown.weights_bytes + breakdown.gradients_bytes + breakdown.buffers_bytes, 700.0);
  }
  EXPECT_EQ(m.current().total(), 0);
  EXPECT_EQ(m.allocated().total(), 1700);
  m.reset_peaks();
  EXPECT_EQ(m.peak_total(), 0);
}

TEST(MemoryTracker, ReleasedArraysAreReusedZeroedAndUncounted) {
  MemoryTracker m;
  const float* first = nullptr;
  {
    TrackedBuffer a(&m, MemoryCategory::activations, 4096);
    a.data()[7] = 3.f;
    first = a.data();
  }
  EXPECT_EQ(m.current().total(), 0);  // the cached array holds no tensor
  TrackedBuffer b(&m, MemoryCategory::activations, 4096);
  EXPECT_EQ(b.data(), first);         // same size: the released array again, no fresh pages
  EXPECT_EQ(b.data()[7], 0.f);        // zeroed as a new one
  EXPECT_EQ(m.current()[MemoryCategory::activations], 4096 * 4);
  TrackedBuffer c(&m, MemoryCategory::activations, 4096);  // the cached one is taken: a new one
  EXPECT_NE(c.data(), b.data());
  TrackedBuffer d(&m, MemoryCategory::buffers, 100);  // another size: never a too-small array
  EXPECT_EQ(d.size(), 100u);
  EXPECT_EQ(m.peak_total(), 2 * 4096 * 4 + 400);
}

std::atomic<int> g_pushes{0}, g_pops{0};  // hooks run on several threads

TEST(Tracer, SpansBecomeTracksPerRankAndLane) {
  set_range_hooks([](const char*) { ++g_pushes; }, [] { ++g_pops; });
  Tracer tracer(2);
  std::thread other([&] {
    ScopedSpan s(&tracer, 1, "all_reduce",
                 {est::Lane::communication, est::SpanKind::collective, est::Phase::communication, 0, 1, 0, 4096});
  });
  {
    ScopedSpan s(&tracer, 0, "fc1", {est::Lane::compute, est::SpanKind::kernel, est::Phase::forward, 2, 3, 1e6, 0});
  }
  { ScopedSpan s(&tracer, 0, "fc2", {est::Lane::compute, est::SpanKind::kernel, est::Phase::backward, 2, 3, 2e6, 0}); }
  other.join();
  set_range_hooks(nullptr, nullptr);
  EXPECT_EQ(g_pushes, 3);
  EXPECT_EQ(g_pops, 3);

  const est::Timeline t = tracer.timeline("probe");
  EXPECT_EQ(t.source, est::TimelineSource::measured);
  ASSERT_EQ(t.tracks.size(), 2u);
  EXPECT_EQ(t.tracks[0].rank, 0);
  EXPECT_EQ(t.tracks[0].lane, est::Lane::compute);
  ASSERT_EQ(t.tracks[0].spans.size(), 2u);
  const auto& fc1 = t.tracks[0].spans[0];
  EXPECT_EQ(t.name_of(fc1), "fc1");
  EXPECT_EQ(fc1.stage, 2);
  EXPECT_EQ(fc1.micro_batch, 3);
  EXPECT_EQ(fc1.flops, 1e6);
  EXPECT_EQ(fc1.phase, est::Phase::forward);
  EXPECT_LE(fc1.end_ns(), t.tracks[0].spans[1].start_ns);
  EXPECT_EQ(t.tracks[1].rank, 1);
  EXPECT_EQ(t.tracks[1].lane, est::Lane::communication);
  EXPECT_EQ(t.tracks[1].spans[0].bytes, 4096);

  tracer.set_enabled(false);
  { ScopedSpan s(&tracer, 0, "ignored", {}); }
  EXPECT_EQ(tracer.span_count(), 3u);
  tracer.clear();
  EXPECT_EQ(tracer.span_count(), 0u);
}

// Where asked, a span records its thread's CPU time: a span that sleeps ran almost none of its
// duration, one that computes ran most of it (at least the CPU time it spun for), and neither
// more than its duration. Off by default, and per rank.
TEST(Tracer, SpansRecordTheirThreadsCpuTimeWhereAsked) {
  Tracer tracer(2);
  EXPECT_FALSE(tracer.thread_cpu_time(0));
  { ScopedSpan s(&tracer, 0, "unclocked", {}); }
  tracer.set_thread_cpu_time(0, true);
  EXPECT_TRUE(tracer.thread_cpu_time(0));
  EXPECT_FALSE(tracer.thread_cpu_time(1)) << "per rank";
  { ScopedSpan s(&tracer, 1, "other rank", {}); }
  {
    ScopedSpan s(&tracer, 0, "sleeps", {est::Lane::communication, est::SpanKind::collective});
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  const std::int64_t spin_ns = 5'000'000;
  {
    ScopedSpan s(&tracer, 0, "computes", {});
    const std::int64_t from = thread_cpu_now_ns();
    ASSERT_GE(from, 0) << "Linux has a per-thread CPU clock";
    volatile double x = 0;
    while (thread_cpu_now_ns() - from < spin_ns) x = x + 1.0;
  }
  const auto zero = tracer.spans(0), one = tracer.spans(1);
  ASSERT_EQ(zero.size(), 3u);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(zero[0].cpu_ns, -1) << "not asked";
  EXPECT_EQ(one[0].cpu_ns, -1) << "rank 1 was not asked";
  const auto& sleeps = zero[1];
  EXPECT_GE(sleeps.cpu_ns, 0);
  EXPECT_LT(sleeps.cpu_ns, 10'000'000) << "a sleeping thread holds no core for most of 30 ms";
  EXPECT_GE(sleeps.end_ns - sleeps.start_ns, 30'000'000);
  const auto& computes = zero[2];
  EXPECT_GE(computes.cpu_ns, spin_ns - 50'000) << "what it spun, less at most a few clock reads";
  EXPECT_LE(computes.cpu_ns, computes.end_ns - computes.start_ns);
  // The timeline carries them.
  const est::Timeline t = tracer.timeline("probe");
  std::int64_t clocked = 0;
  for (const auto& track : t.tracks) {
    for (const auto& span : track.spans) clocked += span.cpu_ns >= 0 ? 1 : 0;
  }
  EXPECT_EQ(clocked, 2);
  // A span recorded by hand keeps what it was given (a process's part, probe/src/process_parts.cpp).
  tracer.record(1, "merged", {}, 0, 100, 40);
  EXPECT_EQ(tracer.spans(1).back().cpu_ns, 40);
}

}  // namespace
}  // namespace plansight::runtime
