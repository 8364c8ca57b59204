// DeviceAllocator and DeviceBuffer (device_allocator.h). cudaErrorMemoryAllocation from cudaMalloc
// is not sticky: the context stays usable, so after clearing it the run can report and go on.
#include "plansight/runtime/cuda/device_allocator.h"

#include <cuda_runtime.h>

#include <string>

#include "cuda_status.h"
#include "plansight/runtime/cuda/memory_fit.h"

namespace plansight::runtime::cuda {
namespace {

// Makes `device` current for the scope and restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    status_ = cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (status_ && previous_ != device) status_ = cuda_check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() {
    if (status_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const Status& status() const { return status_; }

 private:
  int previous_ = 0;
  Status status_ = ok_status();
};

}  // namespace

Result<DeviceMemoryInfo> device_memory_info(int device) {
  DeviceScope scope(device);
  if (!scope.status()) return scope.status().errors();
  std::size_t free_bytes = 0, total_bytes = 0;
  if (auto s = cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"); !s) return s.errors();
  return DeviceMemoryInfo{static_cast<std::int64_t>(free_bytes), static_cast<std::int64_t>(total_bytes)};
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : owner_(other.owner_), ptr_(other.ptr_), bytes_(other.bytes_), category_(other.category_) {
  other.owner_ = nullptr;
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = other.owner_;
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    category_ = other.category_;
    other.owner_ = nullptr;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (ptr_ != nullptr && owner_ != nullptr) owner_->release(*this);
  owner_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

DeviceAllocator::DeviceAllocator(int device, MemoryTracker* tracker)
    : device_(device), tracker_(tracker != nullptr ? tracker : &own_tracker_) {}

Result<bool> DeviceAllocator::check_fits(MemoryCategory category, std::size_t bytes, std::string_view what) const {
  auto info = device_memory_info(device_);
  if (!info) return info.errors();
  if (static_cast<std::int64_t>(bytes) <= info->free_bytes) return true;
  return does_not_fit(what, category, static_cast<std::int64_t>(bytes), info->free_bytes, info->total_bytes, device_,
                      tracker_->current());
}

Result<DeviceBuffer> DeviceAllocator::allocate(MemoryCategory category, std::size_t bytes, std::string_view what) {
  DeviceScope scope(device_);
  if (!scope.status()) return scope.status().errors();
  DeviceBuffer buffer;
  buffer.category_ = category;
  if (bytes == 0) return buffer;
  const cudaError_t error = cudaMalloc(&buffer.ptr_, bytes);
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    buffer.ptr_ = nullptr;
    std::size_t free_bytes = 0, total_bytes = 0;
    if (auto s = cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"); !s) return s.errors();
    return does_not_fit(what, category, static_cast<std::int64_t>(bytes), static_cast<std::int64_t>(free_bytes),
                        static_cast<std::int64_t>(total_bytes), device_, tracker_->current());
  }
  if (error != cudaSuccess) {
    buffer.ptr_ = nullptr;
    return cuda_failure(error, "cudaMalloc of " + std::to_string(bytes) + " bytes for " + std::string(what));
  }
  buffer.owner_ = this;
  buffer.bytes_ = bytes;
  tracker_->allocate(category, static_cast<std::int64_t>(bytes));
  return buffer;
}

void DeviceAllocator::release(DeviceBuffer& buffer) {
  // cudaFree synchronises the device; a failure here (a context already lost) has nowhere to go
  // from a destructor, and the bytes are gone either way.
  cudaFree(buffer.ptr_);
  tracker_->release(buffer.category_, static_cast<std::int64_t>(buffer.bytes_));
}

}  // namespace plansight::runtime::cuda
