// DeviceArray (device_array.h). The pattern is uploaded once as fp32 and converted on the device.
#include "device_array.h"

#include <cuda_runtime.h>

#include <cmath>
#include <vector>

#include "gpu_timing.h"
#include "plansight/kernels/cuda/convert.h"

namespace plansight::probe::cuda {

namespace kc = plansight::kernels::cuda;

DeviceArray& DeviceArray::operator=(DeviceArray&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

DeviceArray::~DeviceArray() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

Result<DeviceArray> DeviceArray::make(kc::DType dtype, std::size_t count, const std::string& what) {
  count = std::max<std::size_t>(count, 1);
  DeviceArray array;
  array.bytes_ = count * kc::size_of(dtype);
  if (auto s = cuda_ok(cudaMalloc(&array.ptr_, array.bytes_), "cudaMalloc of " + std::to_string(array.bytes_) +
                                                                  " bytes for " + what);
      !s) {
    array.ptr_ = nullptr;
    return s.errors();
  }
  // sin(i * 0.7): values in [-1, 1] without a period that a cache or a compressor would notice.
  std::vector<float> host(count);
  for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  if (dtype == kc::DType::fp32) {
    if (auto s = cuda_ok(cudaMemcpy(array.ptr_, host.data(), array.bytes_, cudaMemcpyHostToDevice), "cudaMemcpy (" + what + ")");
        !s) {
      return s.errors();
    }
    return array;
  }
  float* staging = nullptr;
  if (auto s = cuda_ok(cudaMalloc(&staging, count * sizeof(float)), "cudaMalloc (staging for " + what + ")"); !s) {
    return s.errors();
  }
  Result<bool> status = cuda_ok(cudaMemcpy(staging, host.data(), count * sizeof(float), cudaMemcpyHostToDevice),
                                "cudaMemcpy (" + what + ")");
  if (status) {
    const kc::Status converted = dtype == kc::DType::bf16 ? kc::convert(array.as<kc::bfloat16>(), staging, count, nullptr)
                                                          : kc::convert(array.as<kc::float16>(), staging, count, nullptr);
    if (!converted) status = make_error("calibration", converted.message());
  }
  if (status) status = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (" + what + ")");
  cudaFree(staging);
  if (!status) return status.errors();
  return array;
}

}  // namespace plansight::probe::cuda
