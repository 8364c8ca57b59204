// DeviceArray (device_array.h). The pattern is uploaded once as fp32 and converted on the device.
#include "device_array.h"

#include <cuda_runtime.h>

#include <algorithm>
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

namespace {

// sin(0.7 i): values in [-1, 1]. Its period, 2^24 elements (64 MiB of fp32), is beyond any GPU's
// L2 cache, so a GEMM operand of hundreds of millions of elements does not read a few cached
// lines over and over; computed once on the host (0.2 s), where filling every array element by
// element took a minute of device time for the LM-head shapes (3 shapes x 4 precisions x 411 M).
constexpr std::size_t kPatternElements = std::size_t{1} << 24;
const std::vector<float>& pattern() {
  static const std::vector<float> values = [] {
    std::vector<float> v(kPatternElements);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
    return v;
  }();
  return values;
}

// `count` floats of the pattern at device address `out`: one upload of at most a period, then
// device-to-device copies that double what is filled.
Result<bool> fill_pattern(float* out, std::size_t count, const std::string& what) {
  const std::size_t first = std::min(count, kPatternElements);
  if (auto s = cuda_ok(cudaMemcpy(out, pattern().data(), first * sizeof(float), cudaMemcpyHostToDevice),
                       "cudaMemcpy (" + what + ")");
      !s) {
    return s;
  }
  for (std::size_t filled = first; filled < count;) {
    const std::size_t n = std::min(filled, count - filled);
    if (auto s = cuda_ok(cudaMemcpy(out + filled, out, n * sizeof(float), cudaMemcpyDeviceToDevice),
                         "cudaMemcpy (" + what + ", device to device)");
        !s) {
      return s;
    }
    filled += n;
  }
  return true;
}

}  // namespace

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
  // The pattern in fp32: into the array itself, or into a staging array converted on the device.
  float* values = nullptr;
  if (dtype == kc::DType::fp32) {
    values = array.as<float>();
  } else if (auto s = cuda_ok(cudaMalloc(&values, count * sizeof(float)), "cudaMalloc (staging for " + what + ")"); !s) {
    return s.errors();
  }
  Result<bool> status = fill_pattern(values, count, what);
  if (dtype == kc::DType::fp32) {
    // A device-to-device cudaMemcpy may return before the copy is done, and the calibration's
    // non-blocking streams do not wait for the legacy stream it ran on.
    if (status) status = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (" + what + ")");
    if (!status) return status.errors();
    return array;
  }
  if (status) {
    const kc::Status converted = dtype == kc::DType::bf16 ? kc::convert(array.as<kc::bfloat16>(), values, count, nullptr)
                                                          : kc::convert(array.as<kc::float16>(), values, count, nullptr);
    if (!converted) status = make_error("calibration", converted.message());
  }
  if (status) status = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (" + what + ")");
  cudaFree(values);
  if (!status) return status.errors();
  return array;
}

}  // namespace plansight::probe::cuda
