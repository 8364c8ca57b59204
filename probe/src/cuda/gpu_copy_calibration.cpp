// Copy bandwidths of the GPU calibration (gpu_calibration.h): device-to-device (counted as bytes
// read + written, as the CPU calibration's streaming copy and STREAM count them) and host<->device
// from pinned (cudaMallocHost) and pageable (std::vector) host memory, one direction at a time.
// Sizes are large against the L2 cache (50 MiB on H100, NVIDIA H100 whitepaper), so the copies stream.
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "device_array.h"
#include "gpu_timing.h"
#include "plansight/probe/cuda/gpu_calibration.h"

namespace plansight::probe::cuda {
namespace {

namespace kc = plansight::kernels::cuda;

struct PinnedDeleter {
  void operator()(void* p) const { cudaFreeHost(p); }
};

Result<double> copy_rate(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int trials, int reps,
                         const char* what) {
  cudaStream_t stream = nullptr;
  auto seconds = seconds_per_call(stream, trials, reps, [&]() -> std::string {
    const cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, stream);
    return e == cudaSuccess ? std::string() : std::string("cudaMemcpyAsync (") + what + "): " + cudaGetErrorString(e);
  }, kMinTrialSeconds, Hold::none);  // copies of 256 MiB and more: milliseconds each, some synchronous
  if (!seconds) return seconds.errors();
  return *seconds > 0 ? static_cast<double>(bytes) / *seconds : 0.0;
}

}  // namespace

Result<CopyBandwidths> measure_copy_bandwidths(CalibrationLevel level) {
  const std::size_t bytes = (level == CalibrationLevel::quick ? std::size_t{256} : std::size_t{1024}) << 20;
  const int trials = level == CalibrationLevel::quick ? 3 : 7, reps = level == CalibrationLevel::quick ? 2 : 5;
  auto a = DeviceArray::make(kc::DType::fp32, bytes / sizeof(float), "copy source");
  if (!a) return a.errors();
  auto b = DeviceArray::make(kc::DType::fp32, bytes / sizeof(float), "copy destination");
  if (!b) return b.errors();
  void* pinned_raw = nullptr;
  if (auto s = cuda_ok(cudaMallocHost(&pinned_raw, bytes), "cudaMallocHost of " + std::to_string(bytes) + " bytes"); !s) {
    return s.errors();
  }
  std::unique_ptr<void, PinnedDeleter> pinned(pinned_raw);
  std::vector<unsigned char> pageable(bytes, 1);  // touched, so its pages exist before timing

  CopyBandwidths out;
  auto d2d = copy_rate(b->get(), a->get(), bytes, cudaMemcpyDeviceToDevice, trials, reps, "device to device");
  if (!d2d) return d2d.errors();
  out.device_to_device = 2 * *d2d;  // read + written
  struct Case {
    double* rate;
    void* dst;
    const void* src;
    cudaMemcpyKind kind;
    const char* what;
  };
  const Case cases[] = {
      {&out.host_to_device_pinned, a->get(), pinned.get(), cudaMemcpyHostToDevice, "pinned host to device"},
      {&out.host_to_device_pageable, a->get(), pageable.data(), cudaMemcpyHostToDevice, "pageable host to device"},
      {&out.device_to_host_pinned, pinned.get(), a->get(), cudaMemcpyDeviceToHost, "device to pinned host"},
      {&out.device_to_host_pageable, pageable.data(), a->get(), cudaMemcpyDeviceToHost, "device to pageable host"}};
  for (const Case& c : cases) {
    auto rate = copy_rate(c.dst, c.src, bytes, c.kind, trials, reps, c.what);
    if (!rate) return rate.errors();
    *c.rate = *rate;
  }
  return out;
}

}  // namespace plansight::probe::cuda
