// Compact binary encoding of an estimator::Timeline for the store's timelines.data column.
// Per track, each span is a flags byte plus varints: the gap to the previous span's end, the
// duration, and stage/micro-batch/name/kind only when they change; FLOPs and bytes only when
// non-zero and not those of the last span of the same name (then as a varint when whole).
// A format version byte leads, a CRC-32 ends. Layout: src/timeline_format.h.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"

namespace plansight::store {

inline constexpr std::uint8_t timeline_format_version = 1;

// Exact: decode(encode(t)) equals t field for field, doubles bit for bit. Errors only for enum
// values outside their declared range.
Result<std::vector<std::uint8_t>> encode_timeline(const estimator::Timeline& timeline);

// Never trusts the bytes: a truncated, corrupted or newer-format blob gives an error naming the
// byte offset; allocations stay proportional to the blob's size.
Result<estimator::Timeline> decode_timeline(std::span<const std::uint8_t> bytes);

}  // namespace plansight::store
