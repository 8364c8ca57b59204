// Table-driven CRC-32; the table is built once at compile time. Check value: crc32("123456789")
// = 0xCBF43926 (the standard check value of CRC-32/ISO-HDLC), tested in store_codec_test.
#include "crc32.h"

#include <array>

namespace plansight::store::detail {
namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr auto kTable = make_table();

}  // namespace

std::uint32_t crc32(std::span<const std::uint8_t> bytes) {
  std::uint32_t c = 0xFFFFFFFFU;
  for (std::uint8_t b : bytes) c = kTable[(c ^ b) & 0xFFU] ^ (c >> 8);
  return c ^ 0xFFFFFFFFU;
}

}  // namespace plansight::store::detail
