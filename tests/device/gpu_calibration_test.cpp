// The GPU calibration on a real device at the quick level for the tiny model: a GEMM sample per
// shape and precision, copy bandwidths, launch overhead, attention and AdamW rates, collectives
// among virtual ranks, and a profile that survives the JSON round trip the probe's output takes.
// The precision mapping needs no device. Without a device the device tests print why and skip.
#include <gtest/gtest.h>

#include "device_test_util.h"
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

TEST_F(GpuCalibrationTest, QuickCalibrationOfTheTinyModel) {
  ProbeRequest request;
  auto model = probe_model("tiny");
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
  const std::size_t shapes = calibration_gemm_shapes(request, CalibrationLevel::quick).size();
  ASSERT_EQ(p.gemms.size(), shapes * default_gemm_precisions().size());
  for (const auto& g : p.gemms) EXPECT_GT(g.seconds, 0.0) << g.m << "x" << g.n << "x" << g.k;
  EXPECT_GT(p.peak_flops, 1e9) << "any GPU of the last decade does more than a GFLOP/s";
  EXPECT_GT(p.memory_bandwidth_bytes_per_s, 1e10);
  EXPECT_GT(calibration->copies.host_to_device_pinned, 1e8);
  EXPECT_GT(calibration->copies.host_to_device_pageable, 1e8);
  EXPECT_GT(p.kernel_overhead_s, 0.0);
  EXPECT_LT(p.kernel_overhead_s, 1e-3);
  ASSERT_EQ(p.attention.size(), 1u);
  EXPECT_GT(p.attention[0].forward_s, 0.0);
  EXPECT_GT(p.attention[0].backward_s, 0.0);
  EXPECT_GT(p.optimizer_bytes_per_s, 0.0);
  ASSERT_FALSE(p.collectives.empty());
  for (const auto& c : p.collectives) {
    EXPECT_GE(c.ranks, 2);
    EXPECT_GT(c.seconds, 0.0);
  }
  const auto round_trip = est::hardware_profile_from_json(est::to_json(p));
  ASSERT_TRUE(round_trip.ok()) << round_trip.error_text();
  EXPECT_EQ(round_trip->gemms.size(), p.gemms.size());
}

}  // namespace
}  // namespace plansight::probe::cuda
