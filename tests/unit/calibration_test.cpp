// Calibration sanity on whatever machine runs the tests: measured figures are positive and
// finite, large GEMMs are not much slower per FLOP than small ones (BLAS gets more efficient
// with size, never 3x less), collectives report the sizes nccl-tests would, and the shapes are
// the model's. No timed assertions beyond these loose physical bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "plansight/probe/calibration.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

ProbeRequest request(const char* model, std::int64_t tp, std::int64_t pp) {
  auto r = probe_request_from_json({{"model", model}, {"layout", {{"tp", tp}, {"pp", pp}}}});
  EXPECT_TRUE(r.ok()) << r.error_text();
  return *r;
}

TEST(Calibration, GemmShapesAreTheModelsPerTpRank) {
  const auto shapes = calibration_gemm_shapes(request("small", 2, 1), CalibrationLevel::quick);
  auto has = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    for (const auto& s : shapes) {
      if (s.m == m && s.n == n && s.k == k) return true;
    }
    return false;
  };
  // small: hidden 128, ffn 512, vocab 256, 128 tokens per micro-batch; tp 2 splits the outputs
  // of QKV, fc1 and the head and the inputs of proj and fc2.
  EXPECT_TRUE(has(128, 192, 128)) << "qkv";
  EXPECT_TRUE(has(128, 128, 64)) << "proj";
  EXPECT_TRUE(has(128, 256, 128)) << "fc1";
  EXPECT_TRUE(has(128, 128, 256)) << "fc2";
  EXPECT_TRUE(has(128, 192, 128) && has(128, 128, 192)) << "qkv and its input-gradient GEMM";
  EXPECT_TRUE(has(64, 128, 128)) << "proj's weight-gradient GEMM (in, out, tokens)";
  EXPECT_TRUE(has(256, 256, 256)) << "a square";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    for (std::size_t j = i + 1; j < shapes.size(); ++j) {
      EXPECT_FALSE(shapes[i].m == shapes[j].m && shapes[i].n == shapes[j].n && shapes[i].k == shapes[j].k) << "no duplicates";
    }
  }
}

TEST(Calibration, GemmThroughputIsPositiveAndLargerIsNotMuchSlowerPerFlop) {
  // The fastest of three medians each: a machine busy with other work preempts the longer
  // 512^3 calls more often, and one preempted median must not fail the comparison.
  auto fastest = [](const GemmShape& shape) {
    auto best = measure_gemm(shape, CalibrationLevel::quick);
    for (int i = 0; i < 2; ++i) {
      const auto again = measure_gemm(shape, CalibrationLevel::quick);
      if (again.seconds < best.seconds) best = again;
    }
    return best;
  };
  const auto small = fastest({"square", 64, 64, 64});
  const auto large = fastest({"square", 512, 512, 512});
  ASSERT_GT(small.seconds, 0);
  ASSERT_GT(large.seconds, 0);
  EXPECT_EQ(large.precision, est::Precision::fp32);
  const double small_gflops = small.flops() / small.seconds / 1e9, large_gflops = large.flops() / large.seconds / 1e9;
  EXPECT_GT(small_gflops, 0);
  EXPECT_GT(large_gflops, 0);
  EXPECT_LT(large_gflops, 1e5) << "no CPU core does 100 TFLOP/s fp32";
  EXPECT_GT(large_gflops, small_gflops / 3) << "per FLOP a 512^3 GEMM must not be 3x slower than a 64^3 one";
}

TEST(Calibration, ConcurrentCopiesEachGetAShare) {
  const auto alone = measure_gemm({"square", 256, 256, 256}, CalibrationLevel::quick, 1);
  const auto shared = measure_gemm({"square", 256, 256, 256}, CalibrationLevel::quick, 4);
  ASSERT_GT(shared.seconds, 0);
  // Ranks are threads sharing the cores: with more copies than cores, each call takes longer.
  if (std::thread::hardware_concurrency() > 0 && std::thread::hardware_concurrency() <= 2) {
    EXPECT_GT(shared.seconds, alone.seconds * 1.3) << "4 copies on <= 2 cores";
  }
}

TEST(Calibration, BandwidthAndOverheadArePlausible) {
  const double bandwidth = measure_copy_bandwidth(CalibrationLevel::quick);
  EXPECT_GT(bandwidth, 1e8) << "even a slow machine copies 100 MB/s";
  EXPECT_LT(bandwidth, 1e13);
  const double overhead = measure_kernel_overhead(CalibrationLevel::quick);
  EXPECT_GT(overhead, 0);
  EXPECT_LT(overhead, 1e-3);
}

TEST(Calibration, CollectivesCoverEveryOpGroupAndSize) {
  auto samples = measure_collectives({2, 3}, {4096, 65536}, CalibrationLevel::quick);
  ASSERT_TRUE(samples.ok()) << samples.error_text();
  // Per size: 3 collectives for each group, plus send/recv for the pair.
  ASSERT_EQ(samples->size(), 2u * (4 + 3));
  for (const auto& s : *samples) {
    EXPECT_GT(s.seconds, 0);
    EXPECT_TRUE(std::isfinite(s.seconds));
    EXPECT_GT(s.bytes, 0);
    if (s.op == est::Collective::send_recv) {
      EXPECT_EQ(s.ranks, 2);
    }
    if (s.op == est::Collective::all_gather) {  // nccl-tests' S of a gather is the whole output
      EXPECT_EQ(std::fmod(s.bytes / 4, static_cast<double>(s.ranks)), 0.0);
    }
  }
}

TEST(Calibration, StopFlagCancels) {
  std::atomic<bool> stop{true};
  auto samples = measure_collectives({2}, {4096}, CalibrationLevel::quick, &stop);
  EXPECT_FALSE(samples.ok());
  auto profile = calibrate(request("tiny", 1, 1), {CalibrationLevel::quick, &stop});
  EXPECT_FALSE(profile.ok());
}

TEST(Calibration, ProfileOfATinyRun) {
  auto profile = calibrate(request("tiny", 2, 1), {CalibrationLevel::quick, nullptr});
  ASSERT_TRUE(profile.ok()) << profile.error_text();
  EXPECT_FALSE(profile->empty());
  EXPECT_GT(profile->peak_flops, 0);
  EXPECT_GT(profile->memory_bandwidth_bytes_per_s, 0);
  EXPECT_GE(profile->kernel_overhead_s, 0);
  EXPECT_FALSE(profile->gemms.empty());
  EXPECT_FALSE(profile->collectives.empty());
  EXPECT_EQ(profile->device.rfind("cpu: ", 0), 0u) << profile->device;
  // JSON round trip through the estimator's reader, as the app reads it.
  auto back = est::hardware_profile_from_json(est::to_json(*profile));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(back->gemms.size(), profile->gemms.size());
}

TEST(Calibration, FusedAttentionAndOptimizerAtTheRunsShape) {
  const auto r = request("small", 2, 1);  // hidden 128, 4 heads, TP 2: 2 heads of 32 per rank
  const auto a = measure_attention(r, CalibrationLevel::quick, 1);
  EXPECT_EQ(a.batch_heads, r.micro_batch * 2);
  EXPECT_EQ(a.seq, r.seq_len);
  EXPECT_EQ(a.head_dim, 32);
  EXPECT_GT(a.forward_s, 0);
  EXPECT_GT(a.backward_s, 0);
  const double rate = measure_optimizer(r, CalibrationLevel::quick, 1);
  EXPECT_GT(rate, 1e6);
  EXPECT_TRUE(std::isfinite(rate));
  auto profile = calibrate(r, {CalibrationLevel::quick, nullptr});
  ASSERT_TRUE(profile.ok()) << profile.error_text();
  EXPECT_EQ(profile->attention.size(), 1u);
  EXPECT_GT(profile->optimizer_bytes_per_s, 0);
}

TEST(Calibration, ElementwiseRatesArePositiveForEveryCalibratedKind) {
  const auto rates = measure_elementwise(request("small", 2, 1), CalibrationLevel::quick, 2, 1e-7);
  for (const char* kind : {"norm_forward", "norm_backward", "residual_forward", "residual_backward", "activation_forward",
                           "activation_backward", "softmax_forward", "softmax_backward", "cross_entropy_forward",
                           "cross_entropy_backward", "embedding_forward", "embedding_backward"}) {
    ASSERT_TRUE(rates.count(kind)) << kind;
    EXPECT_GT(rates.at(kind), 0) << kind;
    EXPECT_TRUE(std::isfinite(rates.at(kind))) << kind;
  }
  // The kinds the probe has no kernel for stay out, so the model keeps the copy bandwidth there.
  EXPECT_FALSE(rates.count("rotary_forward"));
  EXPECT_FALSE(rates.count("dropout_forward"));
  // calibrate() records them in the profile.
  auto profile = calibrate(request("tiny", 1, 1), {CalibrationLevel::quick, nullptr});
  ASSERT_TRUE(profile.ok()) << profile.error_text();
  EXPECT_EQ(profile->elementwise_bytes_per_s.size(), rates.size());
}

}  // namespace
}  // namespace plansight::probe
