// gzip inflation with zlib's streaming API: a fixed input buffer, output straight into the
// caller's buffer, so memory stays at one window plus one input chunk however large the trace.
// Concatenated gzip members (as `cat a.gz b.gz` makes) are read as one stream, like gunzip does.
#include <cstring>
#include <string>

#include <zlib.h>

#include "plansight/interop/byte_source.h"
#include "plansight/interop/trace_error.h"

namespace plansight::interop {
namespace {

class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)), in_(kInputChunk, '\0') {
    std::memset(&z_, 0, sizeof z_);
    // 16 + MAX_WBITS: expect a gzip header and trailer (zlib manual, inflateInit2).
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw TraceError(0, "gzip: cannot initialise zlib");
  }
  ~GzipSource() override { inflateEnd(&z_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  std::size_t read(char* out, std::size_t capacity) override {
    if (capacity == 0 || finished_) return 0;
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(capacity, 1u << 30));
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0) {
        const std::size_t n = inner_->read(in_.data(), in_.size());
        compressed_read_ += n;
        if (n == 0) {
          if (member_started_) {
            throw TraceError(compressed_read_, "gzip: truncated stream (ends inside a member at compressed byte " +
                                                   std::to_string(compressed_read_) + ")");
          }
          finished_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(n);
      }
      member_started_ = true;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_started_ = false;
        // Another member may follow; reset keeps the window allocation.
        if (inflateReset(&z_) != Z_OK) throw TraceError(consumed(), "gzip: cannot reset zlib");
        continue;
      }
      if (rc == Z_BUF_ERROR) continue;  // needs more input; loop reads it
      if (rc != Z_OK) {
        throw TraceError(consumed(), std::string("gzip: corrupt data at compressed byte ") + std::to_string(consumed()) +
                                         (z_.msg ? std::string(" (") + z_.msg + ")" : std::string()));
      }
    }
    return capacity - z_.avail_out;
  }
  std::string_view kind() const override { return "gzip"; }

 private:
  static constexpr std::size_t kInputChunk = 256 * 1024;
  std::uint64_t consumed() const { return compressed_read_ - z_.avail_in; }

  std::unique_ptr<ByteSource> inner_;
  std::string in_;
  z_stream z_;
  std::uint64_t compressed_read_ = 0;
  bool member_started_ = false;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> make_gzip_source(std::unique_ptr<ByteSource> compressed) {
  return std::make_unique<GzipSource>(std::move(compressed));
}

}  // namespace plansight::interop
