// for_each_tar_member(): the tar format as POSIX.1-2017 'pax' describes it (ustar headers of 512
// bytes: name 0..99, size 124..135 in octal, checksum 148..155, type 156, magic 257, prefix
// 345..499), plus GNU tar's 'L' long-name members and pax 'x' headers' path= records.
#include "tar_reader.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "plansight/interop/trace_error.h"

namespace plansight::interop::detail {
namespace {

constexpr std::size_t kBlock = 512;

// Reads exactly n bytes (throws at a premature end).
void read_exactly(ByteSource& in, char* out, std::size_t n, std::uint64_t& offset) {
  std::size_t got = 0;
  while (got < n) {
    const std::size_t r = in.read(out + got, n - got);
    if (r == 0) throw TraceError(offset + got, "the tar archive ends inside a block (truncated)");
    got += r;
  }
  offset += n;
}

void skip(ByteSource& in, std::uint64_t n, std::uint64_t& offset) {
  std::array<char, 8192> buf;
  while (n > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(n, buf.size()));
    read_exactly(in, buf.data(), want, offset);
    n -= want;
  }
}

std::uint64_t octal(const char* field, std::size_t width, std::uint64_t offset) {
  // GNU base-256 for sizes of 8 GiB and more: the high bit of the first byte set.
  if (static_cast<unsigned char>(field[0]) & 0x80) {
    std::uint64_t v = static_cast<unsigned char>(field[0]) & 0x7f;
    for (std::size_t i = 1; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(field[i]);
    return v;
  }
  std::uint64_t v = 0;
  std::size_t i = 0;
  while (i < width && (field[i] == ' ' || field[i] == '\0')) ++i;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i) v = v * 8 + static_cast<std::uint64_t>(field[i] - '0');
  if (i < width && field[i] != ' ' && field[i] != '\0') throw TraceError(offset, "a tar header has a bad octal number");
  return v;
}

std::string text(const char* field, std::size_t width) { return std::string(field, strnlen(field, width)); }

// The member's bytes, and no more: reads stop at its size.
class MemberSource final : public ByteSource {
 public:
  MemberSource(ByteSource& archive, std::uint64_t size, std::uint64_t& offset)
      : archive_(archive), left_(size), offset_(offset) {}
  std::size_t read(char* out, std::size_t capacity) override {
    if (left_ == 0) return 0;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, left_));
    const std::size_t got = archive_.read(out, want);
    if (got == 0) throw TraceError(offset_, "the tar archive ends inside a member (truncated)");
    left_ -= got;
    offset_ += got;
    return got;
  }
  std::string_view kind() const override { return "tar member"; }
  std::uint64_t left() const { return left_; }

 private:
  ByteSource& archive_;
  std::uint64_t left_;
  std::uint64_t& offset_;
};

// The path= record of a pax extended header ("%d path=%s\n" records, POSIX.1-2017 pax).
std::string pax_path(std::string_view records) {
  while (!records.empty()) {
    const std::size_t space = records.find(' ');
    if (space == std::string_view::npos) break;
    const std::size_t length = static_cast<std::size_t>(std::strtoull(std::string(records.substr(0, space)).c_str(), nullptr, 10));
    if (length <= space || length > records.size()) break;
    const std::string_view record = records.substr(space + 1, length - space - 2);  // without the '\n'
    if (record.starts_with("path=")) return std::string(record.substr(5));
    records.remove_prefix(length);
  }
  return {};
}

}  // namespace

bool looks_like_tar(std::string_view block) {
  return block.size() >= kBlock && block.substr(257, 5) == "ustar";
}

void for_each_tar_member(ByteSource& archive,
                         const std::function<void(const std::string&, std::uint64_t, ByteSource&)>& member) {
  std::uint64_t offset = 0;
  std::string long_name;  // from a preceding 'L' or pax 'x' member
  std::array<char, kBlock> header;
  for (;;) {
    // The archive ends with two zero blocks; some writers stop after one, or at the end of data.
    std::size_t got = 0;
    while (got < kBlock) {
      const std::size_t r = archive.read(header.data() + got, kBlock - got);
      if (r == 0) break;
      got += r;
    }
    if (got == 0) return;
    if (got < kBlock) throw TraceError(offset + got, "the tar archive ends inside a header (truncated)");
    const std::uint64_t header_offset = offset;
    offset += kBlock;
    if (std::all_of(header.begin(), header.end(), [](char c) { return c == '\0'; })) return;
    // Checksum: the header's bytes summed with the checksum field read as spaces.
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
    if (sum != octal(header.data() + 148, 8, header_offset)) {
      throw TraceError(header_offset, "not a tar header (its checksum does not match): the archive is damaged");
    }
    const std::uint64_t size = octal(header.data() + 124, 12, header_offset);
    const std::uint64_t padded = (size + kBlock - 1) / kBlock * kBlock;
    const char type = header[156];
    std::string name = text(header.data(), 100);
    if (looks_like_tar(std::string_view(header.data(), kBlock))) {
      const std::string prefix = text(header.data() + 345, 155);
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    if (type == 'L' || type == 'x') {
      std::string data(static_cast<std::size_t>(std::min<std::uint64_t>(size, 1 << 20)), '\0');
      read_exactly(archive, data.data(), data.size(), offset);
      skip(archive, padded - data.size(), offset);
      long_name = type == 'L' ? text(data.data(), data.size()) : pax_path(data);
      continue;
    }
    if (!long_name.empty()) name = std::move(long_name), long_name.clear();
    if (type == '0' || type == '\0' || type == '7') {
      MemberSource contents(archive, size, offset);
      member(name, size, contents);
      skip(archive, contents.left() + (padded - size), offset);
    } else {
      skip(archive, padded, offset);  // directories, links, devices: nothing to read
    }
  }
}

}  // namespace plansight::interop::detail
