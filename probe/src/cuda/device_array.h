// Scratch device memory of the calibration: an owned cudaMalloc'd array filled with values of
// activation scale (a fixed pattern in [-1, 1] with a period beyond any L2 cache, copied on the
// device and converted there to the element type), so that tensor cores and memory see data
// like a training step's rather than zeros.
#pragma once

#include <cstddef>
#include <string>

#include "plansight/estimator/diagnostic.h"
#include "plansight/kernels/cuda/dtypes.h"

struct CUstream_st;

namespace plansight::probe::cuda {

class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(DeviceArray&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& other) noexcept;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray();

  // `count` elements of `dtype`, filled with the pattern; `what` names it in errors.
  static Result<DeviceArray> make(kernels::cuda::DType dtype, std::size_t count, const std::string& what);

  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace plansight::probe::cuda
