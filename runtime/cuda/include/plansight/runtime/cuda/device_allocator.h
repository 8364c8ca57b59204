// Device memory of one rank, accounted by category (weights, gradients, optimizer states,
// activations, communication buffers) in a runtime::MemoryTracker, with peaks, and checked
// against what the device has free (cudaMemGetInfo). An allocation the device cannot hold is an
// error value "does not fit: needed X, free Y ..." (memory_fit.h), never a crash or an exit, so
// a probe run reports that its layout does not fit this GPU. Plain C++ may include this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plansight/estimator/diagnostic.h"
#include "plansight/runtime/memory_tracker.h"

namespace plansight::runtime::cuda {

struct DeviceMemoryInfo {
  std::int64_t free_bytes = 0;
  std::int64_t total_bytes = 0;
};

// cudaMemGetInfo on `device` (the calling thread's current device is restored afterwards).
Result<DeviceMemoryInfo> device_memory_info(int device);

class DeviceAllocator;

// Owned device bytes counted under one category; move-only, released on destruction or reset().
// Contents start undefined (as cudaMalloc's): zero them with cudaMemsetAsync on the rank's stream.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  MemoryCategory category() const { return category_; }
  bool empty() const { return ptr_ == nullptr; }
  void reset();  // cudaFree and release the bytes

 private:
  friend class DeviceAllocator;
  DeviceAllocator* owner_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  MemoryCategory category_ = MemoryCategory::buffers;
};

class DeviceAllocator {
 public:
  // Allocates on `device`, counting into `tracker` (the rank's; must outlive the allocator and
  // its buffers) or into an own tracker when null.
  explicit DeviceAllocator(int device, MemoryTracker* tracker = nullptr);
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // `bytes` of device memory for `what` ("block 3 qkv"). When the device cannot hold them: the
  // "does not fit" error (field "memory.<category>") with the free and total bytes and what
  // this allocator holds per category. Other CUDA failures name cudaMalloc.
  Result<DeviceBuffer> allocate(MemoryCategory category, std::size_t bytes, std::string_view what);

  // Whether `bytes` more would fit in what the device has free now, without allocating (a plan
  // check before a run): true, or the same "does not fit" error.
  Result<bool> check_fits(MemoryCategory category, std::size_t bytes, std::string_view what) const;

  int device() const { return device_; }
  MemoryTracker& tracker() { return *tracker_; }
  const MemoryTracker& tracker() const { return *tracker_; }

 private:
  friend class DeviceBuffer;
  void release(DeviceBuffer& buffer);

  int device_;
  MemoryTracker own_tracker_;
  MemoryTracker* tracker_;
};

}  // namespace plansight::runtime::cuda
