// File and memory byte sources, and the gzip sniffing front door.
#include "plansight/interop/byte_source.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "plansight/interop/trace_error.h"

namespace plansight::interop {
namespace {

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& path) : path_(path.string()) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (!file_) throw TraceError(0, "cannot open " + path_ + ": " + std::strerror(errno));
  }
  ~FileSource() override {
    if (file_) std::fclose(file_);
  }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  std::size_t read(char* out, std::size_t capacity) override {
    const std::size_t n = std::fread(out, 1, capacity, file_);
    if (n == 0 && std::ferror(file_)) throw TraceError(offset_, "cannot read " + path_ + ": " + std::strerror(errno));
    offset_ += n;
    return n;
  }
  std::string_view kind() const override { return "file"; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t offset_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  std::size_t read(char* out, std::size_t capacity) override {
    const std::size_t n = std::min(capacity, bytes_.size() - pos_);
    if (n > 0) std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::string_view kind() const override { return "memory"; }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

// Peeks the first bytes of a source and replays them before the rest.
class PeekedSource final : public ByteSource {
 public:
  PeekedSource(std::unique_ptr<ByteSource> inner, std::string head) : inner_(std::move(inner)), head_(std::move(head)) {}
  std::size_t read(char* out, std::size_t capacity) override {
    if (pos_ < head_.size()) {
      const std::size_t n = std::min(capacity, head_.size() - pos_);
      std::memcpy(out, head_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return inner_->read(out, capacity);
  }
  std::string_view kind() const override { return inner_->kind(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string head_;
  std::size_t pos_ = 0;
};

std::unique_ptr<ByteSource> sniff(std::unique_ptr<ByteSource> raw) {
  std::string head(2, '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const std::size_t n = raw->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  head.resize(got);
  const bool gz = looks_like_gzip(head);
  auto peeked = std::make_unique<PeekedSource>(std::move(raw), std::move(head));
  if (gz) return make_gzip_source(std::move(peeked));
  return peeked;
}

}  // namespace

bool looks_like_gzip(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
}

std::unique_ptr<ByteSource> open_file_source(const std::filesystem::path& path) {
  return std::make_unique<FileSource>(path);
}

std::unique_ptr<ByteSource> make_memory_source(std::string_view bytes) { return std::make_unique<MemorySource>(bytes); }

std::unique_ptr<ByteSource> open_trace_source(const std::filesystem::path& path) { return sniff(open_file_source(path)); }

std::unique_ptr<ByteSource> make_trace_source(std::string_view bytes) {
  if (looks_like_gzip(bytes)) return make_gzip_source(make_memory_source(bytes));
  return make_memory_source(bytes);
}

}  // namespace plansight::interop
