// Layout of an encoded timeline, shared by the encoder and the decoder (all integers LEB128
// varints, signed ones zigzag; doubles 8 bytes little-endian):
//   "PSTL" | version u8 | source u8 | title | name count, names | track count, tracks | CRC-32 LE
//   track: rank | lane u8 | stream | label | [contents u8: version 2 and later] | span count | spans
//   span:  flags u8 | [traits u8] | [name Δ] [stage Δ] [micro Δ] | gap to previous end
//          | duration − reference duration | [flops] | [bytes] | [duration − CPU time: a track
//          with CPU times; a span without one (-1) stores duration + 1] | [operator: a track with
//          operators, the name index or -1]
// A track's contents byte: kTrackCpuTimes (version 2 and later), kTrackOperators (version 3).
// "previous" restarts per track at {end 0, name -1, stage -1, micro -1, traits 0}. The reference
// (CostMemory) is an earlier span of the same name or kind: its duration and costs usually repeat.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string_view>
#include <vector>

namespace plansight::store::detail {

inline constexpr std::array<std::uint8_t, 4> kTimelineMagic = {'P', 'S', 'T', 'L'};
inline constexpr std::uint8_t kTrackCpuTimes = 1;
inline constexpr std::uint8_t kTrackOperators = 2;

// Span flags. A double is stored as "absent" (+0.0), "as the reference span" (bit for bit), a
// varint (a whole number in (0, 2^53]: FLOP and byte counts usually are) or its 8 raw bytes
// (anything else, NaN and -0.0 included).
enum DoubleMode : std::uint8_t { kDoubleZero = 0, kDoubleVarint = 1, kDoubleRaw = 2, kDoubleAsReference = 3 };
inline constexpr std::uint8_t kFlopsShift = 0;  // bits 0-1: DoubleMode of flops
inline constexpr std::uint8_t kBytesShift = 2;  // bits 2-3: DoubleMode of bytes
inline constexpr std::uint8_t kNameChanged = 1U << 4;
inline constexpr std::uint8_t kStageChanged = 1U << 5;
inline constexpr std::uint8_t kMicroChanged = 1U << 6;
inline constexpr std::uint8_t kTraitsChanged = 1U << 7;

// Traits byte: kind in bits 0-3, phase in bits 4-6, tensor core in bit 7.
inline constexpr std::uint8_t kMaxKind = 8;    // SpanKind::idle
inline constexpr std::uint8_t kMaxPhase = 6;   // Phase::communication
inline constexpr std::uint8_t kMaxLane = 3;    // Lane::host
inline constexpr std::uint8_t kMaxSource = 2;  // TimelineSource::imported

// Smallest encodings, used to bound counts read from untrusted bytes before allocating.
inline constexpr std::size_t kMinSpanBytes = 3;   // flags, gap, duration
inline constexpr std::size_t kMinTrackBytes = 5;  // rank, lane, stream, label length, span count

inline constexpr double kMaxExactWhole = 9007199254740992.0;  // 2^53

// Wrapping int64 arithmetic: exact round trips for every value, no signed overflow.
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t u) {
  return static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1U);
}

inline std::uint8_t pack_traits(unsigned kind, unsigned phase, bool tensor_core) {
  return static_cast<std::uint8_t>(kind | (phase << 4) | (tensor_core ? 0x80U : 0U));
}

// State carried from span to span within a track.
struct Previous {
  std::int64_t end_ns = 0;
  std::int32_t name_id = -1;
  std::int32_t stage = -1;
  std::int32_t micro_batch = -1;
  std::uint8_t traits = 0;
};

// The reference span: the last one with the same name or, for a name not seen yet (or out of
// range), the last one with the same traits byte, anywhere earlier in the timeline. Measured
// traces repeat kernel names layer after layer with near-equal durations and equal costs;
// predicted ones name each op uniquely ("F3.1") but repeat durations and costs per kind/phase.
class CostMemory {
 public:
  struct Cost {
    std::int64_t duration_ns = 0;
    double flops = 0;
    double bytes = 0;
    bool seen = false;
  };
  explicit CostMemory(std::size_t names) : by_name_(names) {}
  const Cost* reference(std::int32_t name_id, std::uint8_t traits) const {
    if (in_range(name_id) && by_name_[static_cast<std::size_t>(name_id)].seen) {
      return &by_name_[static_cast<std::size_t>(name_id)];
    }
    return by_traits_[traits].seen ? &by_traits_[traits] : nullptr;
  }
  void remember(std::int32_t name_id, std::uint8_t traits, const Cost& cost) {
    if (in_range(name_id)) by_name_[static_cast<std::size_t>(name_id)] = cost;
    by_traits_[traits] = cost;
  }

 private:
  bool in_range(std::int32_t name_id) const {
    return name_id >= 0 && static_cast<std::size_t>(name_id) < by_name_.size();
  }
  std::vector<Cost> by_name_;
  std::array<Cost, 256> by_traits_{};
};

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  void svarint(std::int64_t v) { varint(zigzag(v)); }
  void f64(double v) { fixed(std::bit_cast<std::uint64_t>(v), 8); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void string(std::string_view s) {
    varint(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

 private:
  void fixed(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

}  // namespace plansight::store::detail
