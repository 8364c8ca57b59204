// Compact binary encoding of an estimator::Timeline for the store's timelines.data column.
// Per track, each span is a flags byte plus varints: the gap to the previous span's end, the
// duration, and stage/micro-batch/name/kind only when they change; FLOPs and bytes only when
// non-zero and not those of the last span of the same name (then as a varint when whole).
// A format version byte leads, a CRC-32 ends. Layout: src/timeline_format.h. Version 2 adds each
// span's thread CPU time (Span::cpu_ns) on the tracks that carry one, version 3 each span's
// operator (Span::operator_id) on the tracks that carry one; a timeline is written in the oldest
// version that holds it (one without either as version 1, byte for byte as before), so that older
// programs still read what they can.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"

namespace plansight::store {

inline constexpr std::uint8_t timeline_format_version = 3;  // the newest this program reads and writes
inline constexpr std::uint8_t timeline_format_version_without_operators = 2;
inline constexpr std::uint8_t timeline_format_version_without_cpu_time = 1;

// The version encode_timeline() writes for `timeline`: 3 when a span has an operator, else 2 when
// one has a CPU time, else 1.
std::uint8_t timeline_format_version_of(const estimator::Timeline& timeline);

// Exact: decode(encode(t)) equals t field for field, doubles bit for bit. Errors only for enum
// values outside their declared range.
Result<std::vector<std::uint8_t>> encode_timeline(const estimator::Timeline& timeline);

// Never trusts the bytes: a truncated, corrupted or newer-format blob gives an error naming the
// byte offset; allocations stay proportional to the blob's size.
Result<estimator::Timeline> decode_timeline(std::span<const std::uint8_t> bytes);

}  // namespace plansight::store
