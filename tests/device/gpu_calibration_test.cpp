// The GPU calibration on a real device at the quick level for the tiny model, checked for its
// accounting: a GEMM sample per shape and precision with 2mnk FLOPs, peak and bandwidth derived
// from the samples, collectives at nccl-tests' sizes, attention at the run's shape, an exact JSON
// round trip; measured figures bounded by the device's own physical limits (its attributes), not
// by five-orders-of-magnitude guesses. How fast it is: bench/gpu/gpu_calibrate.cpp. The precision
// mapping needs no device. Without a device the device tests print why and skip.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <tuple>

#include "device_test_util.h"
#include "gpu_timing.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/probe/cuda/gpu_calibration.h"

namespace plansight::probe::cuda {
namespace {

namespace est = plansight::estimator;

TEST(GpuCalibrationPrecisions, MapToTheEstimatorsPrecisions) {
  const auto precisions = default_gemm_precisions();
  ASSERT_EQ(precisions.size(), 4u);
  EXPECT_EQ(precisions[0].precision(), est::Precision::bf16);
  EXPECT_EQ(precisions[1].precision(), est::Precision::fp16);
  EXPECT_EQ(precisions[2].precision(), est::Precision::tf32);
  EXPECT_EQ(precisions[3].precision(), est::Precision::fp32);
}

class GpuCalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override { PLANSIGHT_SKIP_WITHOUT_DEVICE(); }
};

// Physical limits of the device, from its attributes. Dense 16-bit tensor-core FLOPs per SM per
// clock: A100 2048 (312 TFLOP/s over 108 SMs at 1.41 GHz), H100 4096 (989 TFLOP/s over 132 SMs at
// 1.83 GHz); 8192 leaves a generation of margin. Memory: HBM/GDDR move 2 x clock x bus width per
// second (H100 SXM: 2 x 2619 MHz x 5120 bits = 3.35 TB/s); a copy reads or writes device memory,
// so none goes faster, and the 256 MiB quick-level copy is larger than any L2.
struct DeviceLimits {
  double flops_per_s = 0;
  double memory_bytes_per_s = 0;
};

DeviceLimits device_limits(int device) {
  int sms = 0, clock_khz = 0, memory_khz = 0, bus_bits = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device), cudaSuccess);
  return {8192.0 * sms * clock_khz * 1e3, 2.0 * memory_khz * 1e3 * bus_bits / 8};
}

// A calibration trial times the GPU, not the host that enqueues the calls (gpu_timing.h): each
// call here spends 30 us of host time before it launches a one-element GeLU (a few microseconds
// on the GPU), so back-to-back timing without the hold would read about 30 us a call; behind the
// hold the calls run back to back and each takes well under that.
TEST_F(GpuCalibrationTest, HeldTrialsTimeTheGpuNotTheHostsEnqueue) {
  float* one = nullptr;
  ASSERT_CUDA(cudaMalloc(&one, sizeof(float)));
  ASSERT_CUDA(cudaMemset(one, 0, sizeof(float)));
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  constexpr double kHostSecondsPerCall = 30e-6;
  int calls = 0;
  auto seconds = seconds_per_call(stream, 3, 5, [&]() -> std::string {
    ++calls;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kHostSecondsPerCall);
    while (std::chrono::steady_clock::now() < until) {
    }
    const plansight::kernels::cuda::Status s = plansight::kernels::cuda::gelu_forward(one, one, 1, stream);
    return s.ok() ? std::string() : s.message();
  });
  ASSERT_TRUE(seconds.ok()) << seconds.error_text();
  EXPECT_GT(calls, 20);  // the sizing trial lengthened the trials towards kMinTrialSeconds
  EXPECT_GT(*seconds, 0.0);
  EXPECT_LT(*seconds, kHostSecondsPerCall / 2) << "timed at the host's pace, not the GPU's";
  cudaStreamDestroy(stream);
  cudaFree(one);
}

// A stop asked of the collective sweep ends it on every rank together (the ranks agree before
// each case): "cancelled", and no rank left waiting in a collective its peers never join.
TEST_F(GpuCalibrationTest, StoppedCollectiveSweepEndsOnEveryRank) {
  const std::atomic<bool> stop{true};
  auto samples = measure_device_collectives({2, 4}, {1 << 20, 1 << 24}, CalibrationLevel::quick, 0, &stop);
  ASSERT_FALSE(samples.ok());
  EXPECT_NE(samples.error_text().find("cancelled"), std::string::npos) << samples.error_text();
}

// calibrate_gpu() as gpu_calibration.h documents it: one sample per (shape, precision) in that
// order, each exactly its shape, peak_flops the best of them, the profile's memory bandwidth the
// device-to-device copy, collectives among the run's groups at nccl-tests' sizes, the attention
// sample at the per-rank shape, and a JSON round trip that changes nothing. Measured figures are
// bounded only by what the device can physically do (device_limits).
TEST_F(GpuCalibrationTest, QuickCalibrationOfTheTinyModelIsDerivedFromItsSamples) {
  ProbeRequest request;
  auto model = probe_model("tiny");  // 2 layers, hidden 64, 4 heads
  ASSERT_TRUE(model.ok()) << model.error_text();
  request.model = *model;
  request.layout.tp = 2;
  request.seq_len = 64;
  GpuCalibrationOptions options;
  options.level = CalibrationLevel::quick;
  options.nccl = false;
  const auto calibration = calibrate_gpu(request, options);
  ASSERT_TRUE(calibration.ok()) << calibration.error_text();
  const est::HardwareProfile& p = calibration->profile;
  EXPECT_NE(p.device.find("sm_"), std::string::npos) << p.device;
  const DeviceLimits limits = device_limits(options.device);

  const auto shapes = calibration_gemm_shapes(request, CalibrationLevel::quick);
  const auto precisions = default_gemm_precisions();
  ASSERT_EQ(p.gemms.size(), shapes.size() * precisions.size());
  double best = 0;
  for (std::size_t i = 0; i < p.gemms.size(); ++i) {
    const auto& g = p.gemms[i];
    const auto& shape = shapes[i / precisions.size()];
    EXPECT_EQ(std::make_tuple(g.m, g.n, g.k, g.batch), std::make_tuple(shape.m, shape.n, shape.k, std::int64_t{1})) << i;
    EXPECT_EQ(g.precision, precisions[i % precisions.size()].precision()) << i;
    EXPECT_EQ(g.flops(), 2.0 * static_cast<double>(shape.m * shape.n * shape.k)) << i;
    ASSERT_TRUE(g.seconds > 0 && std::isfinite(g.seconds)) << i;
    EXPECT_LE(g.flops() / g.seconds, limits.flops_per_s) << shape.name << ": faster than the device's tensor cores";
    best = std::max(best, g.flops() / g.seconds);
  }
  EXPECT_EQ(p.peak_flops, best);

  const CopyBandwidths& c = calibration->copies;
  EXPECT_EQ(p.memory_bandwidth_bytes_per_s, c.device_to_device);
  for (double rate : {c.device_to_device, c.host_to_device_pinned, c.host_to_device_pageable, c.device_to_host_pinned,
                      c.device_to_host_pageable}) {
    EXPECT_GT(rate, 0.0);
    EXPECT_LE(rate, limits.memory_bytes_per_s) << "a copy faster than the device memory it reads or writes";
  }
  EXPECT_GT(p.kernel_overhead_s, 0.0);
  EXPECT_TRUE(std::isfinite(p.kernel_overhead_s));

  ASSERT_EQ(p.attention.size(), 1u);
  EXPECT_EQ(p.attention[0].batch_heads, request.micro_batch * 2) << "4 heads over TP 2";
  EXPECT_EQ(p.attention[0].seq, 64);
  EXPECT_EQ(p.attention[0].head_dim, 16);
  EXPECT_GT(p.attention[0].forward_s, 0.0);
  EXPECT_GT(p.attention[0].backward_s, 0.0);
  EXPECT_GT(p.optimizer_bytes_per_s, 0.0);
  EXPECT_LE(p.optimizer_bytes_per_s, limits.memory_bytes_per_s) << "AdamW's bytes faster than device memory";

  // Groups {2} (TP 2 = the world); sizes {4 KiB, 1 MiB, 16 MiB}, one micro-batch's bf16
  // activation, 1 x 64 tokens x 64 hidden x 2 B = 8 KiB, and the DP bucket, one layer's fp32
  // gradients over TP 2, (12 x 64^2 + 13 x 64) x 4 / 2 = 99,968 B; nccl-tests' S, every block
  // dividing evenly by 2.
  std::set<std::tuple<est::Collective, std::int64_t, double>> got, want;
  for (const auto& s : p.collectives) {
    got.insert({s.op, s.ranks, s.bytes});
    EXPECT_GT(s.seconds, 0.0);
    EXPECT_FALSE(s.crosses_nodes);
  }
  for (double bytes : {4096.0, 8192.0, 99968.0, 1048576.0, 16777216.0}) {
    for (auto op : {est::Collective::all_reduce, est::Collective::all_gather, est::Collective::reduce_scatter,
                    est::Collective::send_recv}) {
      want.insert({op, 2, bytes});
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(p.collectives.size(), want.size());

  const auto round_trip = est::hardware_profile_from_json(est::to_json(p));
  ASSERT_TRUE(round_trip.ok()) << round_trip.error_text();
  EXPECT_EQ(est::to_json(*round_trip), est::to_json(p));
}

}  // namespace
}  // namespace plansight::probe::cuda
