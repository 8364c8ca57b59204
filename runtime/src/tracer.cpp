// Tracer: per-rank span logs merged into a Timeline on demand; NVTX-style hooks as two atomic
// function pointers so that recording never takes a lock it does not need.
#include "plansight/runtime/tracer.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>

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

void Tracer::record(int rank, std::string name, const SpanInfo& info, std::int64_t start_ns, std::int64_t end_ns) {
  if (!enabled_ || rank < 0 || rank >= static_cast<int>(ranks_.size())) return;
  RankLog& log = ranks_[static_cast<std::size_t>(rank)];
  std::lock_guard lock(log.mutex);
  log.entries.push_back({std::move(name), info, start_ns, end_ns});
}

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
  if (tracer_) start_ns_ = tracer_->now_ns();
}

ScopedSpan::~ScopedSpan() {
  if (tracer_) tracer_->record(rank_, name_, info_, start_ns_, tracer_->now_ns());
  range_pop();
}

}  // namespace plansight::runtime
