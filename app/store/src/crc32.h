// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32()) over a byte range.
// The timeline blobs end with it: SQLite pages carry no checksum, and a flipped bit in a varint
// would otherwise decode into a plausible but wrong timeline.
#pragma once

#include <cstdint>
#include <span>

namespace plansight::store::detail {

std::uint32_t crc32(std::span<const std::uint8_t> bytes);

}  // namespace plansight::store::detail
