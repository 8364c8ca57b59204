// Memory accounting of one rank: bytes by category (weights, gradients, optimizer states,
// activations, communication buffers), current and peak per category and the peak of the total
// (the maximum of the sum, not the sum of maxima). TrackedBuffer is the allocation every model
// buffer goes through, so that the accounting cannot drift from what was really allocated.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <map>
#include <mutex>
#include <vector>

#include "plansight/estimator/estimate.h"

namespace plansight::runtime {

// The estimator's MemoryBreakdown fields, in its order (its reserve has no allocation here).
enum class MemoryCategory : std::uint8_t { weights, gradients, optimizer, activations, buffers };
inline constexpr std::size_t kMemoryCategories = 5;

struct MemoryUsage {
  std::array<std::int64_t, kMemoryCategories> bytes{};
  std::int64_t operator[](MemoryCategory c) const { return bytes[static_cast<std::size_t>(c)]; }
  std::int64_t total() const;
  estimator::MemoryBreakdown breakdown() const;  // reserve_bytes = 0
};

// Thread-safe: a rank's compute thread and its communication thread both allocate.
class MemoryTracker {
 public:
  void allocate(MemoryCategory category, std::int64_t bytes);
  void release(MemoryCategory category, std::int64_t bytes);

  MemoryUsage current() const;
  MemoryUsage peak() const;        // per category, the maximum since the last reset_peaks()
  std::int64_t peak_total() const; // the maximum of current().total() since then
  MemoryUsage allocated() const;   // cumulative bytes ever allocated, per category
  void reset_peaks();              // peaks := current (call at the start of a step)

  // A zeroed array of `count` floats, reused from a released one of the same size when there
  // is one. A step allocates the same activation shapes every micro-batch; fresh arrays of
  // that size come from mmap, and the first touch of each page faults (a few hundred
  // microseconds per layer for the small model, untraced gaps between kernels). Keeping
  // released arrays, as GPU caching allocators do, leaves only the zeroing. The cached arrays
  // are not counted in any category: they hold no tensor.
  std::unique_ptr<float[]> take_block(std::size_t count);
  void give_back_block(std::size_t count, std::unique_ptr<float[]> block);

 private:
  mutable std::mutex mutex_;
  MemoryUsage current_, peak_, allocated_;
  std::int64_t peak_total_ = 0;
  std::mutex cache_mutex_;
  std::map<std::size_t, std::vector<std::unique_ptr<float[]>>> cache_;  // by float count
};

// An owned, zero-initialised float array counted in a tracker under one category. Move-only;
// the bytes are released when it is destroyed or reset. A null tracker counts nothing.
class TrackedBuffer {
 public:
  TrackedBuffer() = default;
  TrackedBuffer(MemoryTracker* tracker, MemoryCategory category, std::size_t count);
  TrackedBuffer(TrackedBuffer&& other) noexcept;
  TrackedBuffer& operator=(TrackedBuffer&& other) noexcept;
  TrackedBuffer(const TrackedBuffer&) = delete;
  TrackedBuffer& operator=(const TrackedBuffer&) = delete;
  ~TrackedBuffer();

  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::int64_t bytes() const { return static_cast<std::int64_t>(count_ * sizeof(float)); }
  MemoryCategory category() const { return category_; }
  void zero();
  void reset();  // frees the array and releases its bytes

 private:
  MemoryTracker* tracker_ = nullptr;
  MemoryCategory category_ = MemoryCategory::buffers;
  std::size_t count_ = 0;
  std::unique_ptr<float[]> data_;
};

}  // namespace plansight::runtime
