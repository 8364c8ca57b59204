// TraceError: the one exception type inside the interop readers. It carries the byte offset where
// reading failed; importers catch it at their public boundary and return a Diagnostic, so callers
// only ever see Result<T> and never a partial timeline.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace plansight::interop {

class TraceError : public std::runtime_error {
 public:
  TraceError(std::uint64_t offset, const std::string& message)
      : std::runtime_error(message), offset_(offset) {}
  std::uint64_t offset() const { return offset_; }

 private:
  std::uint64_t offset_;
};

}  // namespace plansight::interop
