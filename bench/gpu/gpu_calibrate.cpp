// plansight-bench-gpu-calibrate: runs the GPU calibration (probe/src/cuda) for a model preset and
// prints what it measured — GEMM TFLOP/s per shape and precision, copy bandwidths, launch
// overhead, attention and AdamW, collective bus bandwidth (nccl-tests' busbw) — with the device
// and the command, or the HardwareProfile as JSON (--json).
//   plansight-bench-gpu-calibrate [--model tiny|small|gpt2-124m] [--tp N] [--dp N] [--seq N]
//                                 [--micro-batch N] [--quick] [--json]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/enums.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/probe/cuda/gpu_calibration.h"

namespace {

namespace est = plansight::estimator;
namespace pc = plansight::probe::cuda;

int usage(const char* why) {
  std::cerr << "plansight-bench-gpu-calibrate: " << why
            << "\nusage: plansight-bench-gpu-calibrate [--model tiny|small|gpt2-124m] [--tp N] [--dp N] [--seq N]"
               " [--micro-batch N] [--quick] [--json]\n";
  return 2;
}

std::string_view op_name(est::Collective op) {
  switch (op) {
    case est::Collective::all_reduce: return "all_reduce";
    case est::Collective::all_gather: return "all_gather";
    case est::Collective::reduce_scatter: return "reduce_scatter";
    case est::Collective::broadcast: return "broadcast";
    case est::Collective::send_recv: return "send_recv";
  }
  return "?";
}

// Host microseconds one matmul_forward (bf16, with bias, its description already cached) takes to
// enqueue: the wall time of 500 calls back to back on one stream, before it is synchronised,
// median of 5 rounds. The shape is the smallest the probe runs (64^3), whose kernel takes a few
// microseconds, so the 500 launches stay within the device's launch queue. The host's cost
// matters where the GPU's kernels are as short: virtual ranks' TP-split GEMMs of 8-10 us.
double gemm_enqueue_us() {
  namespace kc = plansight::kernels::cuda;
  constexpr int kDim = 64, kCalls = 500;
  std::unique_ptr<kc::Blas> blas;
  if (!kc::Blas::create(blas)) return -1;
  kc::bfloat16 *a = nullptr, *w = nullptr, *bias = nullptr, *out = nullptr;
  constexpr std::size_t kElementBytes = 2;  // bf16 (an incomplete type to plain C++)
  const std::size_t bytes = kElementBytes * kDim * kDim;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&w, bytes) != cudaSuccess ||
      cudaMalloc(&bias, kElementBytes * kDim) != cudaSuccess || cudaMalloc(&out, bytes) != cudaSuccess) {
    return -1;
  }
  cudaMemset(a, 0, bytes);
  cudaMemset(w, 0, bytes);
  cudaMemset(bias, 0, kElementBytes * kDim);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::vector<double> rounds;
  bool ok = kc::matmul_forward(out, a, w, bias, kDim, kDim, kDim, *blas, stream).ok();
  for (int round = 0; ok && round < 6; ++round) {
    cudaStreamSynchronize(stream);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; ok && i < kCalls; ++i) ok = kc::matmul_forward(out, a, w, bias, kDim, kDim, kDim, *blas, stream).ok();
    const auto stop = std::chrono::steady_clock::now();
    if (round > 0) rounds.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / kCalls);
  }
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  for (void* p : {static_cast<void*>(a), static_cast<void*>(w), static_cast<void*>(bias), static_cast<void*>(out)}) {
    cudaFree(p);
  }
  if (!ok || rounds.empty()) return -1;
  std::nth_element(rounds.begin(), rounds.begin() + static_cast<std::ptrdiff_t>(rounds.size() / 2), rounds.end());
  return rounds[rounds.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = "small";
  plansight::probe::ProbeRequest request;
  pc::GpuCalibrationOptions options;
  bool json = false;
  std::string command = argv[0];
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    command += " " + arg;
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    auto number = [&](std::int64_t& out) {
      const char* v = next();
      if (v == nullptr) return false;
      command += std::string(" ") + v;
      out = std::atoll(v);
      return out > 0;
    };
    if (arg == "--model") {
      const char* v = next();
      if (v == nullptr) return usage("--model needs a name");
      model = v;
      command += " " + model;
    } else if (arg == "--tp") {
      if (!number(request.layout.tp)) return usage("--tp needs a number >= 1");
    } else if (arg == "--dp") {
      if (!number(request.layout.dp)) return usage("--dp needs a number >= 1");
    } else if (arg == "--seq") {
      if (!number(request.seq_len)) return usage("--seq needs a number >= 1");
    } else if (arg == "--micro-batch") {
      if (!number(request.micro_batch)) return usage("--micro-batch needs a number >= 1");
    } else if (arg == "--quick") {
      options.level = plansight::probe::CalibrationLevel::quick;
    } else if (arg == "--json") {
      json = true;
    } else {
      return usage(("unknown argument " + arg).c_str());
    }
  }
  auto spec = plansight::probe::probe_model(model);
  if (!spec) return usage(spec.error_text().c_str());
  request.model = *spec;
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::cerr << "plansight-bench-gpu-calibrate: no CUDA device ("
              << (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") << ")\n";
    return 1;
  }
  const auto calibration = pc::calibrate_gpu(request, options);
  if (!calibration) {
    std::cerr << "plansight-bench-gpu-calibrate: " << calibration.error_text() << "\n";
    return 1;
  }
  const est::HardwareProfile& p = calibration->profile;
  if (json) {
    std::cout << est::to_json(p).dump(2) << "\n";
    return 0;
  }
  std::printf("device: %s\ncommand: %s\n\n", p.device.c_str(), command.c_str());
  std::printf("%-8s %8s %8s %8s %12s %10s\n", "gemm", "m", "n", "k", "precision", "TFLOP/s");
  for (const auto& g : p.gemms) {
    std::printf("%-8s %8lld %8lld %8lld %12s %10.2f\n", "", static_cast<long long>(g.m), static_cast<long long>(g.n),
                static_cast<long long>(g.k), std::string(est::to_string(g.precision)).c_str(),
                g.seconds > 0 ? g.flops() / g.seconds / 1e12 : 0.0);
  }
  const auto& c = calibration->copies;
  std::printf("\ncopy GB/s: device-device %.1f (read+write), host->device pinned %.1f pageable %.1f, "
              "device->host pinned %.1f pageable %.1f\n",
              c.device_to_device / 1e9, c.host_to_device_pinned / 1e9, c.host_to_device_pageable / 1e9,
              c.device_to_host_pinned / 1e9, c.device_to_host_pageable / 1e9);
  // The GPU's time per one-element kernel queued back to back (gpu_timing.h: held trials), which
  // the time model adds per kernel; what the host takes to enqueue one is the line after.
  std::printf("launch overhead (GPU, kernels queued back to back): %.2f us\n", p.kernel_overhead_s * 1e6);
  if (const double us = gemm_enqueue_us(); us >= 0) {
    std::printf("GEMM enqueue (host, bf16 64^3 with bias, cached description): %.2f us a call\n", us);
  } else {
    std::printf("GEMM enqueue (host): not measured (a CUDA or cuBLASLt call failed)\n");
  }
  for (const auto& a : p.attention) {
    std::printf("attention (b*h=%lld, s=%lld, d=%lld): forward %.1f us, backward %.1f us\n",
                static_cast<long long>(a.batch_heads), static_cast<long long>(a.seq), static_cast<long long>(a.head_dim),
                a.forward_s * 1e6, a.backward_s * 1e6);
  }
  std::printf("AdamW (fp32 master, bf16 copy): %.1f GB/s of charged bytes\n\n", p.optimizer_bytes_per_s / 1e9);
  std::printf("%-15s %6s %12s %10s %12s\n", "collective", "ranks", "bytes", "us", "busbw GB/s");
  for (const auto& s : p.collectives) {
    const double busbw = s.seconds > 0 ? s.bytes * est::bus_factor(s.op, s.ranks) / s.seconds / 1e9 : 0.0;
    std::printf("%-15s %6lld %12.0f %10.1f %12.2f\n", std::string(op_name(s.op)).c_str(),
                static_cast<long long>(s.ranks), s.bytes, s.seconds * 1e6, busbw);
  }
  return 0;
}
