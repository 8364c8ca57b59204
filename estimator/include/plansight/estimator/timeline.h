// Timeline: one type for predicted, measured and imported timelines. Tracks are (rank, lane);
// spans carry int64 nanoseconds, what they did (phase, stage, micro-batch) and their cost
// (FLOPs, bytes). Metrics over a Timeline are pure functions, so they mean the same on all sources.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plansight::estimator {

enum class Lane : std::uint8_t { compute, communication, copy, host };
enum class SpanKind : std::uint8_t { kernel, collective, send, recv, memcpy, memset, host, annotation, idle };
enum class Phase : std::uint8_t { none, forward, backward, weight_grad, recompute, optimizer, communication };
enum class TimelineSource : std::uint8_t { predicted, measured, imported };

struct Span {
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  double flops = 0;
  double bytes = 0;
  std::int32_t name_id = -1;      // index into Timeline::names; -1 unnamed
  std::int32_t stage = -1;        // pipeline stage (model chunk), -1 unknown
  std::int32_t micro_batch = -1;  // -1 unknown
  SpanKind kind = SpanKind::kernel;
  Phase phase = Phase::none;
  bool tensor_core = false;
  // Processor time the span's thread ran in it (its thread CPU clock), where the source measured
  // it: the CPU probe does on the step it keeps. Below its duration when the thread waited (for a
  // peer, or for a core it shares with other threads). -1: not measured (predicted timelines, GPU
  // kernels, imports).
  std::int64_t cpu_ns = -1;
  // The operator the span ran for, as an index into Timeline::names, where the span's own name
  // does not say it: a GPU kernel, copy or memset takes the first word of the NVTX range open on
  // the thread that launched it ("fc2" of "fc2 backward stage 0 mb 3", activity_timeline.h). -1:
  // none known, or the span is named after its operator (the CPU probe's spans).
  std::int32_t operator_id = -1;

  std::int64_t end_ns() const { return start_ns + duration_ns; }
};

struct Track {
  std::int32_t rank = 0;
  Lane lane = Lane::compute;
  std::int32_t stream = -1;  // device stream or thread id where known
  std::string label;
  std::vector<Span> spans;   // sorted by start_ns
};

struct Timeline {
  TimelineSource source = TimelineSource::predicted;
  std::string title;
  std::vector<std::string> names;  // interned span names
  std::vector<Track> tracks;

  std::int32_t intern(const std::string& name);
  const std::string& name_of(const Span& span) const;
  // names[span.operator_id] where it has one, else name_of(span).
  const std::string& operator_of(const Span& span) const;
  std::int64_t begin_ns() const;
  std::int64_t end_ns() const;
  void sort_spans();  // each track by start_ns, stable
};

std::string_view to_string(Lane v);
std::string_view to_string(SpanKind v);
std::string_view to_string(Phase v);
std::string_view to_string(TimelineSource v);

}  // namespace plansight::estimator
