// Timeline helpers: name interning, bounds and ordering.
#include "plansight/estimator/timeline.h"

#include <algorithm>
#include <limits>

namespace plansight::estimator {

std::int32_t Timeline::intern(const std::string& name) {
  // Linear search is fine for the few hundred distinct kernel names a trace has; importers
  // that intern millions of spans keep their own hash map and fill `names` directly.
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<std::int32_t>(i);
  }
  names.push_back(name);
  return static_cast<std::int32_t>(names.size() - 1);
}

const std::string& Timeline::name_of(const Span& span) const {
  static const std::string unnamed;
  if (span.name_id < 0 || static_cast<std::size_t>(span.name_id) >= names.size()) return unnamed;
  return names[static_cast<std::size_t>(span.name_id)];
}

const std::string& Timeline::operator_of(const Span& span) const {
  if (span.operator_id >= 0 && static_cast<std::size_t>(span.operator_id) < names.size()) {
    return names[static_cast<std::size_t>(span.operator_id)];
  }
  return name_of(span);
}

std::int64_t Timeline::begin_ns() const {
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  for (const auto& t : tracks) {
    if (!t.spans.empty()) begin = std::min(begin, t.spans.front().start_ns);
  }
  return begin == std::numeric_limits<std::int64_t>::max() ? 0 : begin;
}

std::int64_t Timeline::end_ns() const {
  std::int64_t end = 0;
  bool any = false;
  for (const auto& t : tracks) {
    for (const auto& s : t.spans) {
      end = any ? std::max(end, s.end_ns()) : s.end_ns();
      any = true;
    }
  }
  return end;
}

void Timeline::sort_spans() {
  for (auto& t : tracks) {
    std::stable_sort(t.spans.begin(), t.spans.end(),
                     [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
  }
}

std::string_view to_string(Lane v) {
  switch (v) {
    case Lane::compute: return "compute";
    case Lane::communication: return "communication";
    case Lane::copy: return "copy";
    case Lane::host: return "host";
  }
  return "?";
}

std::string_view to_string(SpanKind v) {
  switch (v) {
    case SpanKind::kernel: return "kernel";
    case SpanKind::collective: return "collective";
    case SpanKind::send: return "send";
    case SpanKind::recv: return "recv";
    case SpanKind::memcpy: return "memcpy";
    case SpanKind::memset: return "memset";
    case SpanKind::host: return "host";
    case SpanKind::annotation: return "annotation";
    case SpanKind::idle: return "idle";
  }
  return "?";
}

std::string_view to_string(Phase v) {
  switch (v) {
    case Phase::none: return "none";
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::weight_grad: return "weight_grad";
    case Phase::recompute: return "recompute";
    case Phase::optimizer: return "optimizer";
    case Phase::communication: return "communication";
  }
  return "?";
}

std::string_view to_string(TimelineSource v) {
  switch (v) {
    case TimelineSource::predicted: return "predicted";
    case TimelineSource::measured: return "measured";
    case TimelineSource::imported: return "imported";
  }
  return "?";
}

}  // namespace plansight::estimator
