// Tracer: per-rank span logs merged into a Timeline on demand; NVTX-style hooks as two atomic
// function pointers so that recording never takes a lock it does not need.
#include "plansight/runtime/tracer.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>

#include <time.h>

namespace plansight::runtime {
namespace {

std::atomic<RangePushHook> g_push{nullptr};
std::atomic<RangePopHook> g_pop{nullptr};

}  // namespace

void set_range_hooks(RangePushHook push, RangePopHook pop) {
  g_push.store(push, std::memory_order_release);
  g_pop.store(pop, std::memory_order_release);
}
void range_push(const char* name) {
  if (auto hook = g_push.load(std::memory_order_relaxed)) hook(name);
}
void range_pop() {
  if (auto hook = g_pop.load(std::memory_order_relaxed)) hook();
}

Tracer::Tracer(int ranks) : origin_(std::chrono::steady_clock::now()), ranks_(static_cast<std::size_t>(std::max(ranks, 1))) {}

std::int64_t Tracer::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
}

std::int64_t Tracer::origin_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(origin_.time_since_epoch()).count();
}

std::vector<Tracer::RecordedSpan> Tracer::spans(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return {};
  const RankLog& log = ranks_[static_cast<std::size_t>(rank)];
  std::lock_guard lock(log.mutex);
  return log.entries;
}

void Tracer::record(int rank, std::string name, const SpanInfo& info, std::int64_t start_ns, std::int64_t end_ns,
                    std::int64_t cpu_ns) {
  if (!enabled_ || rank < 0 || rank >= static_cast<int>(ranks_.size())) return;
  RankLog& log = ranks_[static_cast<std::size_t>(rank)];
  std::lock_guard lock(log.mutex);
  log.entries.push_back({std::move(name), info, start_ns, end_ns, cpu_ns});
}

void Tracer::set_thread_cpu_time(int rank, bool on) {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return;
  ranks_[static_cast<std::size_t>(rank)].thread_cpu_time.store(on, std::memory_order_relaxed);
}

bool Tracer::thread_cpu_time(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return false;
  return ranks_[static_cast<std::size_t>(rank)].thread_cpu_time.load(std::memory_order_relaxed);
}

std::int64_t thread_cpu_now_ns() {
#ifdef CLOCK_THREAD_CPUTIME_ID
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
#endif
  return -1;
}

namespace {

// What one read of the thread's CPU clock adds to the interval between two reads: the least
// difference of back-to-back reads (a system call: 1.3 us each, measured on the 2-core VM the
// CPU benchmarks run on, where the 240 spans of a rank's step would add 0.3 ms to its phases).
std::int64_t thread_cpu_read_ns() {
  static const std::int64_t cost = [] {
    std::int64_t least = -1;
    for (int i = 0; i < 32; ++i) {
      const std::int64_t a = thread_cpu_now_ns(), b = thread_cpu_now_ns();
      if (a < 0 || b < a) return std::int64_t{0};
      if (least < 0 || b - a < least) least = b - a;
    }
    return least < 0 ? std::int64_t{0} : least;
  }();
  return cost;
}

}  // namespace

void Tracer::clear() {
  for (auto& log : ranks_) {
    std::lock_guard lock(log.mutex);
    log.entries.clear();
  }
}

void Tracer::clear(int rank) {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return;
  RankLog& log = ranks_[static_cast<std::size_t>(rank)];
  std::lock_guard lock(log.mutex);
  log.entries.clear();
}

std::size_t Tracer::span_count() const {
  std::size_t n = 0;
  for (const auto& log : ranks_) {
    std::lock_guard lock(log.mutex);
    n += log.entries.size();
  }
  return n;
}

estimator::Timeline Tracer::timeline(const std::string& title) const {
  estimator::Timeline out;
  out.source = estimator::TimelineSource::measured;
  out.title = title;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    std::lock_guard lock(ranks_[r].mutex);
    // Lanes in enum order (compute first), then streams.
    std::map<std::pair<estimator::Lane, std::int32_t>, std::size_t> track_of;
    for (const auto& e : ranks_[r].entries) track_of.emplace(std::make_pair(e.info.lane, e.info.stream), 0);
    for (auto& [key, index] : track_of) {
      index = out.tracks.size();
      estimator::Track track;
      track.rank = static_cast<std::int32_t>(r);
      track.lane = key.first;
      track.stream = key.second;
      track.label = "rank " + std::to_string(r) + " " + std::string(estimator::to_string(key.first));
      if (key.second != 0) track.label += " (stream " + std::to_string(key.second) + ")";
      out.tracks.push_back(std::move(track));
    }
    for (const auto& e : ranks_[r].entries) {
      estimator::Span s;
      s.start_ns = e.start_ns;
      s.duration_ns = std::max<std::int64_t>(e.end_ns - e.start_ns, 0);
      s.flops = e.info.flops;
      s.bytes = e.info.bytes;
      s.name_id = out.intern(e.name);
      s.stage = e.info.stage;
      s.micro_batch = e.info.micro_batch;
      s.kind = e.info.kind;
      s.phase = e.info.phase;
      s.cpu_ns = e.cpu_ns;
      out.tracks[track_of[{e.info.lane, e.info.stream}]].spans.push_back(s);
    }
  }
  out.sort_spans();
  return out;
}

ScopedSpan::ScopedSpan(Tracer* tracer, int rank, const char* name, const SpanInfo& info)
    : tracer_(tracer && tracer->enabled() ? tracer : nullptr), rank_(rank), name_(name), info_(info) {
  if (g_push.load(std::memory_order_relaxed)) {
    // A range tool (NVTX under CUPTI or Nsight Systems) sees what the span is: its name, phase,
    // model chunk and micro-batch, which the GPU timeline reads back (activity_timeline.h).
    std::string label = std::string(name_) + " " + std::string(estimator::to_string(info_.phase));
    if (info_.stage >= 0) label += " stage " + std::to_string(info_.stage);
    if (info_.micro_batch >= 0) label += " mb " + std::to_string(info_.micro_batch);
    range_push(label.c_str());
  } else {
    range_push(name_);
  }
  if (tracer_) {
    // The CPU clock is read inside the wall-clock interval on both sides, so that the span's
    // processor time never exceeds its duration by the reads' own cost.
    start_ns_ = tracer_->now_ns();
    if (tracer_->thread_cpu_time(rank_)) {
      thread_cpu_read_ns();  // its first call measures, outside the span
      cpu_start_ns_ = thread_cpu_now_ns();
    }
  }
}

ScopedSpan::~ScopedSpan() {
  if (tracer_) {
    std::int64_t cpu_ns = -1;
    if (cpu_start_ns_ >= 0) {
      // Between the two reads' samples lies one read's own cost, which is not the span's.
      const std::int64_t cpu_end = thread_cpu_now_ns();
      if (cpu_end >= cpu_start_ns_) cpu_ns = std::max<std::int64_t>(cpu_end - cpu_start_ns_ - thread_cpu_read_ns(), 0);
    }
    const std::int64_t end_ns = tracer_->now_ns();
    tracer_->record(rank_, name_, info_, start_ns_, end_ns, cpu_ns < 0 ? -1 : std::min(cpu_ns, end_ns - start_ns_));
  }
  range_pop();
}

}  // namespace plansight::runtime
