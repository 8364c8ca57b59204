// ByteSource: a forward-only stream of bytes (a file, a memory block, or a gzip stream over
// either), read in chunks so a trace never has to fit in memory. gzip is recognised by its magic
// bytes, not by the file name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace plansight::interop {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `capacity` bytes into `out`; returns 0 only at the end of the data.
  // Throws TraceError when the underlying file or compressed stream is bad or truncated.
  virtual std::size_t read(char* out, std::size_t capacity) = 0;
  // What the reader is ("gzip", "file") for messages.
  virtual std::string_view kind() const = 0;
};

// Opens a file for reading; throws TraceError naming the path when it cannot.
std::unique_ptr<ByteSource> open_file_source(const std::filesystem::path& path);

// Reads from memory that must outlive the source.
std::unique_ptr<ByteSource> make_memory_source(std::string_view bytes);

// Inflates gzip (RFC 1952, concatenated members allowed) from `compressed`.
std::unique_ptr<ByteSource> make_gzip_source(std::unique_ptr<ByteSource> compressed);

// The file's or memory's bytes, inflated when they start with the gzip magic 1f 8b.
std::unique_ptr<ByteSource> open_trace_source(const std::filesystem::path& path);
std::unique_ptr<ByteSource> make_trace_source(std::string_view bytes);

// True when `head` starts with the gzip magic bytes.
bool looks_like_gzip(std::string_view head);

}  // namespace plansight::interop
