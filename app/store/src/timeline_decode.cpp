// Bytes -> Timeline. The checksum is verified first; the parser still checks every read against
// the end of the buffer and bounds every count by the bytes left, so that even a blob with a
// forged checksum can only produce an error, never a crash or a huge allocation.
#include <algorithm>
#include <limits>
#include <new>
#include <string>

#include "crc32.h"
#include "plansight/store/timeline_codec.h"
#include "timeline_format.h"

namespace plansight::store {
namespace {

using namespace detail;
using estimator::Span;

// Thrown only inside this file and caught in decode_timeline(), which turns it into a Diagnostic.
struct DecodeError {
  std::size_t offset;
  std::string what;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::size_t offset() const { return pos_; }
  std::size_t left() const { return bytes_.size() - pos_; }

  std::uint8_t u8(const char* what) {
    if (pos_ >= bytes_.size()) fail(std::string("truncated before ") + what);
    return bytes_[pos_++];
  }
  std::uint64_t varint(const char* what) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = u8(what);
      if (shift == 63 && b > 1) fail(std::string("varint overflow in ") + what);
      v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
      if (!(b & 0x80U)) return v;
    }
    fail(std::string("varint longer than 10 bytes in ") + what);
  }
  std::int64_t svarint(const char* what) { return unzigzag(varint(what)); }
  std::int32_t int32(const char* what) { return narrow(svarint(what), what); }
  double f64(const char* what) {
    if (left() < 8) fail(std::string("truncated before ") + what);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(bytes_[pos_++]) << (8 * i);
    return std::bit_cast<double>(v);
  }
  std::string string(const char* what) {
    const std::uint64_t n = varint(what);
    if (n > left())
      fail(std::string(what) + " length " + std::to_string(n) + " exceeds the " + std::to_string(left()) +
           " bytes left");
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  // A count of items each taking at least `min_bytes`: bounded by what is left.
  std::size_t count(const char* what, std::size_t min_bytes) {
    const std::uint64_t n = varint(what);
    if (n > left() / min_bytes)
      fail(std::string(what) + " " + std::to_string(n) + " cannot fit in the " + std::to_string(left()) +
           " bytes left");
    return static_cast<std::size_t>(n);
  }
  std::int32_t narrow(std::int64_t v, const char* what) {
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
      fail(std::string(what) + " " + std::to_string(v) + " does not fit 32 bits");
    }
    return static_cast<std::int32_t>(v);
  }
  [[noreturn]] void fail(std::string what) const { throw DecodeError{pos_, std::move(what)}; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

double get_double(ByteReader& r, unsigned mode, const double* reference, const char* what) {
  switch (mode) {
    case kDoubleAsReference:
      if (!reference) r.fail(std::string(what) + " refers to an earlier span, and there is none");
      return *reference;
    case kDoubleZero: return 0.0;
    case kDoubleVarint: {
      const std::uint64_t v = r.varint(what);
      if (v == 0 || v > static_cast<std::uint64_t>(kMaxExactWhole))
        r.fail(std::string(what) + " out of range");
      return static_cast<double>(v);
    }
    default: return r.f64(what);  // kDoubleRaw: the modes are two bits, all four are used
  }
}

Span get_span(ByteReader& r, Previous& prev, CostMemory& costs, bool cpu_times, bool operators, std::size_t names) {
  Span s;
  const std::uint8_t flags = r.u8("span flags");
  const std::uint8_t traits = (flags & kTraitsChanged) ? r.u8("span kind") : prev.traits;
  const unsigned kind = traits & 0x0FU;
  const unsigned phase = (traits >> 4) & 0x07U;
  if (kind > kMaxKind || phase > kMaxPhase) {
    r.fail("span kind " + std::to_string(kind) + " or phase " + std::to_string(phase) + " out of range");
  }
  s.kind = static_cast<estimator::SpanKind>(kind);
  s.phase = static_cast<estimator::Phase>(phase);
  s.tensor_core = (traits & 0x80U) != 0;
  s.name_id = prev.name_id;
  s.stage = prev.stage;
  s.micro_batch = prev.micro_batch;
  if (flags & kNameChanged) s.name_id = r.narrow(wrap_add(prev.name_id, r.svarint("span name")), "span name");
  if (flags & kStageChanged) s.stage = r.narrow(wrap_add(prev.stage, r.svarint("span stage")), "span stage");
  if (flags & kMicroChanged) {
    s.micro_batch = r.narrow(wrap_add(prev.micro_batch, r.svarint("span micro-batch")), "span micro-batch");
  }
  const CostMemory::Cost* ref = costs.reference(s.name_id, traits);
  s.start_ns = wrap_add(prev.end_ns, r.svarint("span start"));
  s.duration_ns = wrap_add(ref ? ref->duration_ns : 0, r.svarint("span duration"));
  s.flops = get_double(r, (flags >> kFlopsShift) & 0x3U, ref ? &ref->flops : nullptr, "span flops");
  s.bytes = get_double(r, (flags >> kBytesShift) & 0x3U, ref ? &ref->bytes : nullptr, "span bytes");
  if (cpu_times) {
    s.cpu_ns = wrap_sub(s.duration_ns, r.svarint("span CPU time"));
    if (s.cpu_ns < -1) r.fail("span CPU time " + std::to_string(s.cpu_ns) + " out of range (-1: none, else >= 0)");
  }
  if (operators) {
    const std::int64_t op = r.svarint("span operator");
    if (op < -1 || op >= static_cast<std::int64_t>(names)) {
      r.fail("span operator " + std::to_string(op) + " out of range (-1: none, else a name index below " +
             std::to_string(names) + ")");
    }
    s.operator_id = static_cast<std::int32_t>(op);
  }

  prev = {wrap_add(s.start_ns, s.duration_ns), s.name_id, s.stage, s.micro_batch, traits};
  costs.remember(s.name_id, traits, {s.duration_ns, s.flops, s.bytes, true});
  return s;
}

estimator::Timeline parse(ByteReader& r) {
  for (auto b : kTimelineMagic) {
    if (r.u8("magic") != b) r.fail("not an encoded timeline (magic 'PSTL' missing)");
  }
  const std::uint8_t version = r.u8("format version");
  if (version < timeline_format_version_without_cpu_time || version > timeline_format_version) {
    r.fail("timeline format version " + std::to_string(version) + " is not supported (this program reads " +
           std::to_string(timeline_format_version_without_cpu_time) + " to " + std::to_string(timeline_format_version) +
           "); a newer Plansight wrote it");
  }
  estimator::Timeline t;
  const std::uint8_t source = r.u8("source");
  if (source > kMaxSource) r.fail("source " + std::to_string(source) + " out of range");
  t.source = static_cast<estimator::TimelineSource>(source);
  t.title = r.string("title");
  t.names.resize(r.count("name count", 1));
  for (auto& name : t.names) name = r.string("name");
  t.tracks.resize(r.count("track count", kMinTrackBytes));
  CostMemory costs(t.names.size());
  for (auto& track : t.tracks) {
    track.rank = r.int32("track rank");
    const std::uint8_t lane = r.u8("track lane");
    if (lane > kMaxLane) r.fail("track lane " + std::to_string(lane) + " out of range");
    track.lane = static_cast<estimator::Lane>(lane);
    track.stream = r.int32("track stream");
    track.label = r.string("track label");
    bool cpu_times = false, operators = false;
    if (version >= 2) {
      const std::uint8_t contents = r.u8("track contents");
      const std::uint8_t known = version >= 3 ? kTrackCpuTimes | kTrackOperators : kTrackCpuTimes;
      if ((contents & ~known) != 0) {
        r.fail("track contents " + std::to_string(contents) + " has bits format version " + std::to_string(version) +
               " does not define");
      }
      cpu_times = (contents & kTrackCpuTimes) != 0;
      operators = (contents & kTrackOperators) != 0;
    }
    track.spans.resize(r.count("span count", kMinSpanBytes));
    Previous prev;
    for (auto& span : track.spans) span = get_span(r, prev, costs, cpu_times, operators, t.names.size());
  }
  if (r.left() != 0) r.fail(std::to_string(r.left()) + " unexpected bytes after the last track");
  return t;
}

}  // namespace

Result<estimator::Timeline> decode_timeline(std::span<const std::uint8_t> bytes) {
  constexpr std::size_t kHeader = kTimelineMagic.size() + 2;
  if (bytes.size() < kHeader + 4) {
    return make_error("timeline", "encoded timeline of " + std::to_string(bytes.size()) +
                                      " bytes is too short to hold a header and checksum");
  }
  const auto body = bytes.first(bytes.size() - 4);
  std::uint32_t stored = 0;
  for (int i = 0; i < 4; ++i) stored |= static_cast<std::uint32_t>(bytes[body.size() + i]) << (8 * i);
  // The version is checked before the checksum, so a newer format is reported as such.
  const std::uint8_t version = bytes[kTimelineMagic.size()];
  if ((version < timeline_format_version_without_cpu_time || version > timeline_format_version) &&
      std::equal(kTimelineMagic.begin(), kTimelineMagic.end(), bytes.begin())) {
    return make_error("timeline", "timeline format version " + std::to_string(bytes[kTimelineMagic.size()]) +
                                      " is not supported (this program reads " +
                                      std::to_string(timeline_format_version_without_cpu_time) + " to " +
                                      std::to_string(timeline_format_version) + "); a newer Plansight wrote it");
  }
  if (crc32(body) != stored) {
    return make_error("timeline", "encoded timeline is corrupt: CRC-32 mismatch over " +
                                      std::to_string(body.size()) + " bytes");
  }
  try {
    ByteReader r(body);
    return parse(r);
  } catch (const DecodeError& e) {
    return make_error("timeline",
                      "encoded timeline is corrupt at byte " + std::to_string(e.offset) + ": " + e.what);
  } catch (const std::bad_alloc&) {
    return make_error("timeline",
                      "out of memory decoding a timeline of " + std::to_string(bytes.size()) + " bytes");
  }
}

}  // namespace plansight::store
