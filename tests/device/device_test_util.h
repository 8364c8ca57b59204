// Shared by the device tests: why no device is usable (for the skip message), a device buffer
// filled from a host vector, seeded random data, conversions to and from the 16-bit types
// (cuda_bf16.h / cuda_fp16.h host conversions, round to nearest even), and two comparisons:
// |gpu - cpu| <= rtol (|cpu| + max|cpu|) for results with cancellation (the scale term absorbs
// it near zero), and |gpu - cpu| <= atol + rtol |cpu| per element for those without.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "plansight/kernels/cuda/status.h"

namespace plansight::device_test {

// Empty when a device is usable, else why not (cudaGetDeviceCount's error or "0 devices").
inline std::string no_device_reason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
  if (count == 0) return "cudaGetDeviceCount found 0 devices";
  return {};
}

// Prints "SKIPPED: no CUDA device (<reason>)" and skips the calling test when there is no device.
#define PLANSIGHT_SKIP_WITHOUT_DEVICE()                                          \
  do {                                                                           \
    const std::string reason_ = ::plansight::device_test::no_device_reason();    \
    if (!reason_.empty()) {                                                      \
      std::printf("SKIPPED: no CUDA device (%s)\n", reason_.c_str());            \
      GTEST_SKIP() << "no CUDA device (" << reason_ << ")";                      \
    }                                                                            \
  } while (false)

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr
#define ASSERT_OK(expr)                                               \
  do {                                                                \
    const auto status_ = (expr);                                      \
    ASSERT_TRUE(status_.ok()) << #expr << ": " << status_.message();  \
  } while (false)

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host) : size_(host.size()) {
    error_ = cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes());
    if (error_ == cudaSuccess) error_ = cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice);
    if (error_ != cudaSuccess) ADD_FAILURE() << "device buffer of " << bytes() << " bytes: " << cudaGetErrorString(error_);
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  cudaError_t error() const { return error_; }
  std::vector<T> to_host() const {  // call after the stream is synchronised
    std::vector<T> host(size_);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

 private:
  std::size_t bytes() const { return size_ * sizeof(T); }
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
  cudaError_t error_ = cudaSuccess;
};

inline std::vector<float> random_normal(std::size_t n, std::uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::vector<std::int32_t> random_tokens(std::size_t n, int vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(0, vocab - 1);
  std::vector<std::int32_t> v(n);
  for (std::int32_t& x : v) x = dist(rng);
  return v;
}

inline float widen(float x) { return x; }
inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
inline float widen(__half x) { return __half2float(x); }

template <class E>
E narrow(float x);
template <>
inline float narrow<float>(float x) { return x; }
template <>
inline __nv_bfloat16 narrow<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <>
inline __half narrow<__half>(float x) { return __float2half(x); }

template <class E>
std::vector<E> narrow_all(const std::vector<float>& v) {
  std::vector<E> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = narrow<E>(v[i]);
  return out;
}

template <class E>
std::vector<float> widen_all(const std::vector<E>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = widen(v[i]);
  return out;
}

// v rounded to E and back: the values a 16-bit buffer really holds.
template <class E>
std::vector<float> rounded(const std::vector<float>& v) {
  return widen_all(narrow_all<E>(v));
}

inline void expect_close(const char* what, const std::vector<float>& gpu, const std::vector<float>& cpu,
                         float rtol = 1e-5f) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  float scale = 0.0f;
  for (float x : cpu) scale = std::max(scale, std::fabs(x));
  int mismatches = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const float limit = rtol * (std::fabs(cpu[i]) + scale);
    if (!(std::fabs(gpu[i] - cpu[i]) <= limit) && ++mismatches <= 5) {
      ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << " cpu " << cpu[i] << " (limit " << limit << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": " << mismatches << " of " << cpu.size() << " differ";
}

// Relative tolerance for results stored in E after fp32 math: a few units of E's rounding
// (unit roundoff 2^-8 for bf16, 2^-11 for fp16; IEEE 754-2008 binary16 and bfloat16 formats).
template <class E>
constexpr float storage_rtol() {
  if constexpr (sizeof(E) == 4) {
    return 1e-5f;
  } else if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return 1.6e-2f;
  } else {
    return 2e-3f;
  }
}

// Unit roundoff of E, the largest relative error of one round-to-nearest store: 2^-24 for fp32,
// 2^-8 for bf16 (8 significant bits), 2^-11 for fp16 (11) (IEEE 754-2008 binary16; bfloat16).
template <class E>
constexpr float unit_roundoff() {
  if constexpr (sizeof(E) == 4) {
    return 0x1p-24f;
  } else if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return 0x1p-8f;
  } else {
    return 0x1p-11f;
  }
}

// Absolute error of one store in E below its normal range: half the subnormal spacing. Only
// fp16's matters (2^-24 / 2: probabilities under 6.1e-5 are subnormal); bf16 shares fp32's range.
template <class E>
constexpr float subnormal_atol() {
  return std::is_same_v<E, __half> ? 0x1p-25f : 0.0f;
}

// Every element on its own: |gpu - cpu| <= atol + rtol |cpu|. For values without cancellation
// (probabilities), where a small element must be as right, relatively, as the largest:
// expect_close's scale term (the vector's maximum) would let a 1e-4 probability in a row whose
// largest is 0.05 be wrong by 200% at bf16's tolerance.
inline void expect_close_each(const char* what, const std::vector<float>& gpu, const std::vector<float>& cpu, float rtol,
                              float atol) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  int mismatches = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const float limit = atol + rtol * std::fabs(cpu[i]);
    if (!(std::fabs(gpu[i] - cpu[i]) <= limit) && ++mismatches <= 5) {
      ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << " cpu " << cpu[i] << " (limit " << limit << ", "
                    << (cpu[i] != 0 ? std::fabs(gpu[i] / cpu[i] - 1) : 0.0f) << " relative)";
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": " << mismatches << " of " << cpu.size() << " differ";
}

// A test fixture base: skips without a device, else makes a stream.
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PLANSIGHT_SKIP_WITHOUT_DEVICE();
    ASSERT_CUDA(cudaStreamCreate(&stream_));
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  void sync() { ASSERT_CUDA(cudaStreamSynchronize(stream_)); }

  cudaStream_t stream_ = nullptr;
};

}  // namespace plansight::device_test
