// Timeline -> bytes (layout in timeline_format.h). A back-to-back kernel costs a flags byte, a
// one-byte gap, its duration's difference from the last kernel of its name, and a byte for each
// of name, stage and micro-batch that changed; FLOPs and bytes usually repeat and cost nothing.

#include <algorithm>

#include "crc32.h"
#include "plansight/store/timeline_codec.h"
#include "timeline_format.h"

namespace plansight::store {
namespace {

using namespace detail;
using estimator::Span;

DoubleMode double_mode(double v, const double* reference) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  if (bits == 0) return kDoubleZero;  // +0.0 only: -0.0 stays exact
  if (reference && std::bit_cast<std::uint64_t>(*reference) == bits) return kDoubleAsReference;
  if (v > 0 && v <= kMaxExactWhole && v == static_cast<double>(static_cast<std::uint64_t>(v))) {
    return kDoubleVarint;
  }
  return kDoubleRaw;
}

void put_double(ByteWriter& w, DoubleMode mode, double v) {
  if (mode == kDoubleVarint)
    w.varint(static_cast<std::uint64_t>(v));
  else if (mode == kDoubleRaw)
    w.f64(v);
}

bool has_cpu_times(const estimator::Track& track) {
  return std::any_of(track.spans.begin(), track.spans.end(), [](const Span& s) { return s.cpu_ns >= 0; });
}

bool has_operators(const estimator::Track& track) {
  return std::any_of(track.spans.begin(), track.spans.end(), [](const Span& s) { return s.operator_id >= 0; });
}

void put_span(ByteWriter& w, const Span& s, Previous& prev, CostMemory& costs, bool cpu_times, bool operators) {
  const std::uint8_t traits =
      pack_traits(static_cast<unsigned>(s.kind), static_cast<unsigned>(s.phase), s.tensor_core);
  const CostMemory::Cost* ref = costs.reference(s.name_id, traits);
  const DoubleMode flops_mode = double_mode(s.flops, ref ? &ref->flops : nullptr);
  const DoubleMode bytes_mode = double_mode(s.bytes, ref ? &ref->bytes : nullptr);
  std::uint8_t flags = static_cast<std::uint8_t>((flops_mode << kFlopsShift) | (bytes_mode << kBytesShift));
  if (traits != prev.traits) flags |= kTraitsChanged;
  if (s.name_id != prev.name_id) flags |= kNameChanged;
  if (s.stage != prev.stage) flags |= kStageChanged;
  if (s.micro_batch != prev.micro_batch) flags |= kMicroChanged;

  w.u8(flags);
  if (flags & kTraitsChanged) w.u8(traits);
  if (flags & kNameChanged) w.svarint(static_cast<std::int64_t>(s.name_id) - prev.name_id);
  if (flags & kStageChanged) w.svarint(static_cast<std::int64_t>(s.stage) - prev.stage);
  if (flags & kMicroChanged) w.svarint(static_cast<std::int64_t>(s.micro_batch) - prev.micro_batch);
  // Overlapping spans give a small negative gap; unsorted tracks and extreme values still
  // round-trip, just less compactly.
  w.svarint(wrap_sub(s.start_ns, prev.end_ns));
  w.svarint(wrap_sub(s.duration_ns, ref ? ref->duration_ns : 0));
  put_double(w, flops_mode, s.flops);
  put_double(w, bytes_mode, s.bytes);
  // A thread's CPU time is at most its span's duration and usually close to it (computing) or
  // to 0 (waiting): their difference is the short number in both cases.
  if (cpu_times) w.svarint(wrap_sub(s.duration_ns, s.cpu_ns));
  if (operators) w.svarint(s.operator_id);

  prev = {wrap_add(s.start_ns, s.duration_ns), s.name_id, s.stage, s.micro_batch, traits};
  costs.remember(s.name_id, traits, {s.duration_ns, s.flops, s.bytes, true});
}

}  // namespace

std::uint8_t timeline_format_version_of(const estimator::Timeline& timeline) {
  if (std::any_of(timeline.tracks.begin(), timeline.tracks.end(), has_operators)) return timeline_format_version;
  const bool any = std::any_of(timeline.tracks.begin(), timeline.tracks.end(), has_cpu_times);
  return any ? timeline_format_version_without_operators : timeline_format_version_without_cpu_time;
}

Result<std::vector<std::uint8_t>> encode_timeline(const estimator::Timeline& timeline) {
  if (static_cast<unsigned>(timeline.source) > kMaxSource) {
    return make_error("timeline.source", "value " + std::to_string(static_cast<unsigned>(timeline.source)) +
                                             " is not a TimelineSource (0-2)");
  }
  std::size_t span_count = 0;
  for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
    const auto& track = timeline.tracks[t];
    const std::string field = "timeline.tracks[" + std::to_string(t) + "]";
    if (static_cast<unsigned>(track.lane) > kMaxLane) {
      return make_error(field + ".lane", "value " + std::to_string(static_cast<unsigned>(track.lane)) +
                                             " is not a Lane (0-3)");
    }
    for (std::size_t i = 0; i < track.spans.size(); ++i) {
      const auto& s = track.spans[i];
      if (static_cast<unsigned>(s.kind) > kMaxKind || static_cast<unsigned>(s.phase) > kMaxPhase) {
        return make_error(field + ".spans[" + std::to_string(i) + "]",
                          "kind " + std::to_string(static_cast<unsigned>(s.kind)) + " or phase " +
                              std::to_string(static_cast<unsigned>(s.phase)) +
                              " outside SpanKind (0-8) / Phase (0-6)");
      }
      if (s.cpu_ns < -1) {
        return make_error(field + ".spans[" + std::to_string(i) + "].cpu_ns",
                          "value " + std::to_string(s.cpu_ns) + "; valid: -1 (not measured) or >= 0");
      }
      if (s.operator_id < -1 || s.operator_id >= static_cast<std::int64_t>(timeline.names.size())) {
        return make_error(field + ".spans[" + std::to_string(i) + "].operator_id",
                          "value " + std::to_string(s.operator_id) + "; valid: -1 (none) or a name index, 0 to " +
                              std::to_string(static_cast<std::int64_t>(timeline.names.size()) - 1));
      }
    }
    span_count += track.spans.size();
  }

  std::vector<std::uint8_t> out;
  out.reserve(64 + span_count * 8);
  ByteWriter w(out);
  for (auto b : kTimelineMagic) w.u8(b);
  const std::uint8_t version = timeline_format_version_of(timeline);
  w.u8(version);
  w.u8(static_cast<std::uint8_t>(timeline.source));
  w.string(timeline.title);
  w.varint(timeline.names.size());
  for (const auto& name : timeline.names) w.string(name);
  w.varint(timeline.tracks.size());
  CostMemory costs(timeline.names.size());
  for (const auto& track : timeline.tracks) {
    w.svarint(track.rank);
    w.u8(static_cast<std::uint8_t>(track.lane));
    w.svarint(track.stream);
    w.string(track.label);
    const bool cpu_times = version >= 2 && has_cpu_times(track);
    const bool operators = version >= 3 && has_operators(track);
    if (version >= 2) w.u8(static_cast<std::uint8_t>((cpu_times ? kTrackCpuTimes : 0) | (operators ? kTrackOperators : 0)));
    w.varint(track.spans.size());
    Previous prev;
    for (const auto& s : track.spans) put_span(w, s, prev, costs, cpu_times, operators);
  }
  w.u32(crc32(out));
  return out;
}

}  // namespace plansight::store
