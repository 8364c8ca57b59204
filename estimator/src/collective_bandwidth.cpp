// nccl-tests bus-bandwidth factors and collective summaries.
#include "plansight/estimator/collective_bandwidth.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "plansight/estimator/timeline_metrics.h"

namespace plansight::estimator {

double bus_bandwidth_factor(CollectiveKind kind, std::int32_t group_size) {
  if (group_size < 1) return 0;
  const double n = group_size;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
    case CollectiveKind::send_recv:
    case CollectiveKind::send:
    case CollectiveKind::recv: return 1.0;
    case CollectiveKind::unknown: return 0;
  }
  return 0;
}

CollectiveBandwidth collective_bandwidth(const CollectiveCall& call) {
  CollectiveBandwidth bw;
  if (call.bytes <= 0 || call.duration_ns <= 0) return bw;
  bw.algbw_bytes_per_s = call.bytes / (double(call.duration_ns) * 1e-9);
  bw.busbw_bytes_per_s = bw.algbw_bytes_per_s * bus_bandwidth_factor(call.kind, call.group_size);
  return bw;
}

std::vector<CollectiveCall> collectives_from_timeline(const Timeline& timeline, std::int32_t group_size,
                                                      const KernelClassifier& classifier) {
  const auto classes = classify_names(timeline, classifier);
  std::vector<CollectiveCall> calls;
  for (const auto& track : timeline.tracks) {
    if (track.lane == Lane::host) continue;
    for (const auto& span : track.spans) {
      if (span.kind == SpanKind::annotation || span.kind == SpanKind::idle) continue;
      if (span_class(span, classes) != KernelClass::communication) continue;
      CollectiveCall c;
      c.rank = track.rank;
      c.name = timeline.name_of(span);
      c.kind = collective_kind_from_name(c.name);
      if (c.kind == CollectiveKind::unknown && span.kind == SpanKind::send) c.kind = CollectiveKind::send;
      if (c.kind == CollectiveKind::unknown && span.kind == SpanKind::recv) c.kind = CollectiveKind::recv;
      c.start_ns = span.start_ns;
      c.duration_ns = span.duration_ns;
      c.bytes = span.bytes;
      c.group_size = group_size;
      calls.push_back(std::move(c));
    }
  }
  return calls;
}

std::vector<CollectiveSummary> summarize_collectives(const std::vector<CollectiveCall>& calls) {
  std::map<std::pair<CollectiveKind, std::int32_t>, CollectiveSummary> groups;
  for (const auto& c : calls) {
    auto& g = groups[{c.kind, c.group_size}];
    g.kind = c.kind;
    g.group_size = c.group_size;
    ++g.count;
    g.bytes += c.bytes;
    g.duration_ns += c.duration_ns;
  }
  std::vector<CollectiveSummary> out;
  for (auto& [key, g] : groups) {
    CollectiveCall total{0, g.kind, 0, g.duration_ns, g.bytes, g.group_size, {}, {}, {}};
    const auto bw = collective_bandwidth(total);
    g.algbw_bytes_per_s = bw.algbw_bytes_per_s;
    g.busbw_bytes_per_s = bw.busbw_bytes_per_s;
    out.push_back(g);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.duration_ns > b.duration_ns; });
  return out;
}

int dtype_size_bytes(std::string_view dtype) {
  std::string s;
  for (char c : dtype) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (s.starts_with("float8") || s.starts_with("fp8") || s == "byte" || s == "char" || s == "bool" ||
      s == "uint8" || s == "int8" || s == "qint8" || s == "quint8") {
    return 1;
  }
  if (s == "half" || s == "bfloat16" || s == "float16" || s == "short" || s == "int16" || s == "uint16") return 2;
  if (s == "float" || s == "float32" || s == "int" || s == "int32" || s == "uint32" || s == "complexhalf") return 4;
  if (s == "double" || s == "float64" || s == "long" || s == "int64" || s == "uint64" || s == "complexfloat") return 8;
  if (s == "complexdouble") return 16;
  return 0;
}

}  // namespace plansight::estimator
