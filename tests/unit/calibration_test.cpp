// The CPU calibration's accounting, which does not depend on how fast this machine is: GEMM
// shapes are the model's per TP rank, a sample's FLOPs are 2mnk of its shape, collective sizes
// follow nccl-tests' S, the profile's figures come from its samples as calibration.h documents,
// and the profile survives the JSON round trip exactly. How fast the GEMMs, copies and collectives
// run is a figure to read: bench/bench_calibration.cpp (bench/results/calibration-cpu.txt). The
// only bounds on measured figures are physical limits of any CPU core, derived where they stand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "plansight/estimator/comm_model.h"
#include "plansight/kernels/blas_threads.h"
#include "plansight/probe/calibration.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

ProbeRequest request(const char* model, std::int64_t tp, std::int64_t pp) {
  auto r = probe_request_from_json({{"model", model}, {"layout", {{"tp", tp}, {"pp", pp}}}});
  EXPECT_TRUE(r.ok()) << r.error_text();
  return *r;
}

// No CPU core does more than 64 fp32 FLOPs per cycle (two FMA pipes of 16 lanes, AVX-512; Arm
// Neoverse V2 has four of 4 lanes, 32) and none is clocked above 6 GHz: 384 GFLOP/s per thread.
constexpr double kMaxFlopsPerCoreSecond = 64 * 6e9;
// Nor does one move more than five 64-byte loads and stores per cycle (Golden Cove: 3 loads + 2
// stores; Zen 4 fewer) at 6 GHz: 1.92e12 bytes per second read + written.
constexpr double kMaxCopyBytesPerCoreSecond = 5 * 64 * 6e9;

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
  EXPECT_TRUE(has(64, 64, 64) && has(256, 256, 256)) << "the quick level's squares";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    for (std::size_t j = i + 1; j < shapes.size(); ++j) {
      EXPECT_FALSE(shapes[i].m == shapes[j].m && shapes[i].n == shapes[j].n && shapes[i].k == shapes[j].k) << "no duplicates";
    }
  }
}

// A sample is the shape it was asked for, in fp32, one GEMM (batch 1), FLOPs exactly 2mnk, alone
// and with concurrent copies; its seconds are finite and no faster than a core can compute.
TEST(Calibration, GemmSampleIsItsShapeWithTwoMnkFlops) {
  kernels::cpu::set_blas_threads(1);
  for (int copies : {1, 3}) {
    const auto s = measure_gemm({"odd", 48, 40, 24}, CalibrationLevel::quick, copies);
    EXPECT_EQ(std::make_tuple(s.m, s.n, s.k, s.batch), std::make_tuple(48, 40, 24, 1)) << copies;
    EXPECT_EQ(s.precision, est::Precision::fp32);
    EXPECT_EQ(s.flops(), 2.0 * 48 * 40 * 24);
    ASSERT_TRUE(std::isfinite(s.seconds)) << copies;
    EXPECT_GE(s.seconds, s.flops() / kMaxFlopsPerCoreSecond) << copies << " copies: faster than any CPU core";
  }
}

TEST(Calibration, CopyBandwidthAndOverheadAreWithinWhatACoreCanDo) {
  const double bandwidth = measure_copy_bandwidth(CalibrationLevel::quick);
  EXPECT_GT(bandwidth, 0);
  EXPECT_LE(bandwidth, kMaxCopyBytesPerCoreSecond) << "one thread copying faster than any core can load and store";
  const double overhead = measure_kernel_overhead(CalibrationLevel::quick);
  EXPECT_GT(overhead, 0);
  EXPECT_TRUE(std::isfinite(overhead));
}

// nccl-tests' S (doc/PERFORMANCE.md): all-reduce the buffer, all-gather the gathered output,
// reduce-scatter the scattered input, send/recv the message. With 3 ranks a 4096-byte request
// gathers 341 floats per rank (1024 / 3, rounded down), S = 341 x 3 x 4 = 4092 bytes.
TEST(Calibration, CollectiveSamplesAreNcclTestsSizesForEveryOpAndGroup) {
  auto samples = measure_collectives({2, 3}, {4096, 65536}, CalibrationLevel::quick);
  ASSERT_TRUE(samples.ok()) << samples.error_text();
  using C = est::Collective;
  const std::vector<std::tuple<C, std::int64_t, double>> expected = {
      {C::all_reduce, 2, 4096},  {C::all_gather, 2, 4096},  {C::reduce_scatter, 2, 4096},  {C::send_recv, 2, 4096},
      {C::all_reduce, 2, 65536}, {C::all_gather, 2, 65536}, {C::reduce_scatter, 2, 65536}, {C::send_recv, 2, 65536},
      {C::all_reduce, 3, 4096},  {C::all_gather, 3, 4092},  {C::reduce_scatter, 3, 4092},
      {C::all_reduce, 3, 65536}, {C::all_gather, 3, 65532}, {C::reduce_scatter, 3, 65532},
  };
  ASSERT_EQ(samples->size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& s = (*samples)[i];
    EXPECT_EQ(std::make_tuple(s.op, s.ranks, s.bytes), expected[i]) << i;
    EXPECT_FALSE(s.crosses_nodes) << i;
    EXPECT_GT(s.seconds, 0) << i;
    EXPECT_TRUE(std::isfinite(s.seconds)) << i;
  }
}

TEST(Calibration, StopFlagCancels) {
  std::atomic<bool> stop{true};
  auto samples = measure_collectives({2}, {4096}, CalibrationLevel::quick, &stop);
  EXPECT_FALSE(samples.ok());
  auto profile = calibrate(request("tiny", 1, 1), {CalibrationLevel::quick, &stop, {}});
  EXPECT_FALSE(profile.ok());
}

// calibrate() as calibration.h documents it: the request's GEMM shapes in order, peak_flops the
// best GEMM throughput measured, groups {2, tp, dp, pp, world} and the quick sizes {4 KiB, 1 MiB}
// plus one micro-batch's fp32 activation (tiny: 1 x 64 tokens x 64 hidden x 4 B = 16384 B), one
// attention sample at the run's per-rank shape, and a JSON round trip that changes nothing.
TEST(Calibration, ProfileOfATinyRunIsDerivedFromItsSamples) {
  const auto r = request("tiny", 2, 1);
  auto profile = calibrate(r, {CalibrationLevel::quick, nullptr, {}});
  ASSERT_TRUE(profile.ok()) << profile.error_text();
  EXPECT_EQ(profile->device, cpu_device_name());

  const auto shapes = calibration_gemm_shapes(r, CalibrationLevel::quick);
  ASSERT_EQ(profile->gemms.size(), shapes.size());
  double best = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& g = profile->gemms[i];
    EXPECT_EQ(std::make_tuple(g.m, g.n, g.k), std::make_tuple(shapes[i].m, shapes[i].n, shapes[i].k)) << shapes[i].name;
    best = std::max(best, g.flops() / g.seconds);
  }
  EXPECT_EQ(profile->peak_flops, best);

  std::set<std::tuple<est::Collective, std::int64_t, double>> got;
  for (const auto& c : profile->collectives) got.insert({c.op, c.ranks, c.bytes});
  std::set<std::tuple<est::Collective, std::int64_t, double>> want;
  for (double bytes : {4096.0, 16384.0, 1048576.0}) {  // 2 ranks: every block divides evenly
    for (auto op : {est::Collective::all_reduce, est::Collective::all_gather, est::Collective::reduce_scatter,
                    est::Collective::send_recv}) {
      want.insert({op, 2, bytes});
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(profile->collectives.size(), want.size());

  ASSERT_EQ(profile->attention.size(), 1u);
  EXPECT_EQ(profile->attention[0].batch_heads, r.micro_batch * 2) << "4 heads over TP 2";
  EXPECT_EQ(profile->attention[0].seq, r.seq_len);
  EXPECT_EQ(profile->attention[0].head_dim, 16) << "hidden 64 / 4 heads";

  auto back = est::hardware_profile_from_json(est::to_json(*profile));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(est::to_json(*back), est::to_json(*profile));
  EXPECT_EQ(back->peak_flops, profile->peak_flops);
  EXPECT_EQ(back->gemms.size(), profile->gemms.size());
  EXPECT_EQ(back->elementwise_bytes_per_s, profile->elementwise_bytes_per_s);
}

TEST(Calibration, FusedAttentionAndOptimizerAtTheRunsShape) {
  const auto r = request("small", 2, 1);  // hidden 128, 4 heads, TP 2: 2 heads of 32 per rank
  const auto a = measure_attention(r, CalibrationLevel::quick, 1);
  EXPECT_EQ(a.batch_heads, r.micro_batch * 2);
  EXPECT_EQ(a.seq, r.seq_len);
  EXPECT_EQ(a.head_dim, 32);
  EXPECT_EQ(a.work(), static_cast<double>(r.micro_batch * 2) * static_cast<double>(r.seq_len * r.seq_len) * 32);
  EXPECT_GT(a.forward_s, 0);
  EXPECT_GT(a.backward_s, 0);
  const double rate = measure_optimizer(r, CalibrationLevel::quick, 1);
  EXPECT_GT(rate, 0);
  EXPECT_LE(rate, kMaxCopyBytesPerCoreSecond) << "AdamW reads and writes its bytes no faster than a copy can";
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
  auto profile = calibrate(request("tiny", 1, 1), {CalibrationLevel::quick, nullptr, {}});
  ASSERT_TRUE(profile.ok()) << profile.error_text();
  EXPECT_EQ(profile->elementwise_bytes_per_s.size(), rates.size());
}

}  // namespace
}  // namespace plansight::probe
