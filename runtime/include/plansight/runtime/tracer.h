// CPU tracer: each rank records spans (steady_clock nanoseconds since one origin shared by all
// ranks) on its compute and communication lanes, and timeline() turns them into a measured
// estimator::Timeline (tracks rank x lane). Where asked (set_thread_cpu_time), a span also
// records the processor time its thread ran in it, from the thread's CPU clock: when rank threads
// outnumber the cores, a span's wall time alone does not say whether its thread computed, waited
// for a core or waited for a peer. Span names also go to optional NVTX-style push/pop
// hooks, so a GPU build can emit NVTX ranges from the same call sites; without hooks they cost
// one relaxed load.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "plansight/estimator/timeline.h"

namespace plansight::runtime {

// NVTX-style range hooks (nvtxRangePushA / nvtxRangePop in a CUDA build). Null: no-op.
using RangePushHook = void (*)(const char* name);
using RangePopHook = void (*)();
void set_range_hooks(RangePushHook push, RangePopHook pop);
void range_push(const char* name);
void range_pop();

// What a span did; start and end are taken by the tracer.
struct SpanInfo {
  estimator::Lane lane = estimator::Lane::compute;
  estimator::SpanKind kind = estimator::SpanKind::kernel;
  estimator::Phase phase = estimator::Phase::none;
  std::int32_t stage = -1;        // global model chunk
  std::int32_t micro_batch = -1;
  double flops = 0;
  double bytes = 0;
  // Which of the rank's threads (a device stream on a GPU): spans of different streams of one
  // lane may overlap, so each (lane, stream) gets its own track. 0: the rank's main thread.
  std::int32_t stream = 0;
};

class Tracer {
 public:
  explicit Tracer(int ranks);

  // Nanoseconds since the tracer's origin (steady_clock, so comparable across rank threads).
  std::int64_t now_ns() const;
  // The origin in steady_clock nanoseconds since its epoch (CLOCK_MONOTONIC on Linux, one clock
  // for every process of a host): spans another process's tracer recorded move onto this one's
  // origin by the difference of the two (plus the processes' clock offset across hosts).
  std::int64_t origin_ns() const;
  bool enabled() const { return enabled_; }
  void set_enabled(bool enabled) { enabled_ = enabled; }  // set between steps, not during one

  // Thread-safe per rank (its compute and communication threads may both record). `cpu_ns`: the
  // recording thread's processor time in the span (-1: not measured).
  void record(int rank, std::string name, const SpanInfo& info, std::int64_t start_ns, std::int64_t end_ns,
              std::int64_t cpu_ns = -1);
  // Whether rank `rank`'s ScopedSpans read their thread's CPU clock at start and end (off by
  // default: a read is a system call, 1.3 us on the 2-core VM the CPU benchmarks run on, so a run
  // measures the one step it keeps).
  void set_thread_cpu_time(int rank, bool on);
  bool thread_cpu_time(int rank) const;
  void clear();          // drops every recorded span
  void clear(int rank);  // drops one rank's spans (each rank, before the step that is kept)
  std::size_t span_count() const;

  struct RecordedSpan {
    std::string name;
    SpanInfo info;
    std::int64_t start_ns;  // since the origin
    std::int64_t end_ns;
    std::int64_t cpu_ns = -1;  // the thread's processor time in the span; -1: not measured
  };
  std::vector<RecordedSpan> spans(int rank) const;  // one rank's, as recorded

  // Tracks for each (rank, lane, stream) that has spans, spans sorted by start, names interned.
  estimator::Timeline timeline(const std::string& title) const;

 private:
  struct RankLog {
    mutable std::mutex mutex;
    std::vector<RecordedSpan> entries;
    std::atomic<bool> thread_cpu_time{false};
  };
  std::chrono::steady_clock::time_point origin_;
  std::vector<RankLog> ranks_;
  bool enabled_ = true;
};

// The calling thread's processor time in nanoseconds (its CPU clock: user and system time it
// ran), or -1 where the platform has no per-thread CPU clock.
std::int64_t thread_cpu_now_ns();

// Records one span from construction to destruction (and pushes/pops an NVTX-style range).
// A null tracer, or a disabled one, records nothing.
class ScopedSpan {
 public:
  ScopedSpan(Tracer* tracer, int rank, const char* name, const SpanInfo& info);
  ~ScopedSpan();
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  Tracer* tracer_;
  int rank_;
  const char* name_;
  SpanInfo info_;
  std::int64_t start_ns_ = 0;
  std::int64_t cpu_start_ns_ = -1;  // the thread's CPU clock at the start; -1: not read
};

}  // namespace plansight::runtime
