// Offloading to host memory: GPU and host bytes of ZeRO-Offload, ZeRO-Infinity and activation
// offloading checked by hand, the CPU optimizer step time, the validation rules naming their
// fields, and the plan JSON round trip of the new fields.
#include <gtest/gtest.h>

#include "../support/published.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/layout_search.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/offload.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

// GPT-3 1.3B as Brown et al. 2020 (Table 2.1) size it: 24 layers, h 2048, 16 heads, 2048
// tokens; vocabulary 51200 (a multiple of 128, so unpadded). Per layer 12h^2 + 13h =
// 50,358,272 parameters; 24 layers 1,208,598,528; word embedding 51200 x 2048 = 104,857,600
// (tied with the head); learned positions 2048 x 2048 = 4,194,304; final norm 2h = 4,096.
// N = 1,317,654,528.
constexpr double kParameters = 1'317'654'528;

// One DGX A100 80GB node (the preset; its host figures: PCIe Gen4 x16 32 GB/s per GPU, 1024 GiB,
// 409.6 GB/s): 8 GPUs, DP 8, ZeRO-2, fp16 with fp32 master weights and Adam, the optimizer
// offloaded.
Plan zero_offload_plan() {
  Plan p = testing::a100_plan(testing::gpt_model(24, 2048, 16), 8);
  auto system = find_system("dgx-a100-80gb");
  EXPECT_TRUE(system.ok());
  p.cluster = system->cluster;
  p.cluster.gpus = 8;
  EXPECT_EQ(p.cluster.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(p.cluster.host_link_bandwidth_bytes_per_s, 32e9);
  EXPECT_EQ(p.cluster.host_memory_bytes, 1024LL << 30);
  EXPECT_DOUBLE_EQ(p.cluster.host_memory_bandwidth_bytes_per_s, 409.6e9);
  p.layout.zero_stage = 2;
  p.layout.offload_optimizer = true;
  p.training.micro_batch = 1;
  p.training.global_batch = 32;  // 4 micro-batches per GPU
  return p;
}

bool has_error_on(const std::vector<Diagnostic>& d, const std::string& field) {
  for (const auto& x : d) {
    if (x.severity == Severity::error && x.field == field) return true;
  }
  return false;
}

TEST(Offload, ZeroOffloadKeepsTwoBytesPerParameterOnTheGpuAndSixteenOnTheHost) {
  const Plan p = zero_offload_plan();
  ASSERT_FALSE(has_errors(validate(p))) << join_messages(validate(p));
  const auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  ASSERT_DOUBLE_EQ(e->parameters_padded, kParameters);
  // ZeRO-Offload (Ren et al. 2021, Sec. 4.1, Fig. 2): 2 B fp16 parameters + 2 B fp16 gradients
  // per parameter on the GPU, 12 B (fp32 parameters, momentum, variance) + 4 B (fp32 gradients)
  // on the CPU. With ZeRO-2 each reduced gradient bucket goes to the host, so of the 2 B only
  // the two 25 MiB buckets in flight stay: GPU model states 2N = 2,635,309,056 bytes plus
  // 52,428,800 bytes of buckets; nothing of the optimizer.
  const MemoryBreakdown& m = e->memory.peak;
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * kParameters);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 0);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 0);
  EXPECT_DOUBLE_EQ(m.buffers_bytes, 2 * 25.0 * (1 << 20));
  // Host: 16 B x N / 8 per GPU = 2,635,309,056 bytes; x 8 GPUs per node = 16 N =
  // 21,082,472,448 bytes (19.63 GiB) of the node's 1024 GiB.
  EXPECT_DOUBLE_EQ(e->memory.stages[0].host_bytes, 16 * kParameters / 8);
  EXPECT_DOUBLE_EQ(e->memory.host_bytes_per_node, 21'082'472'448.0);
  EXPECT_TRUE(e->memory.host_fits);

  // Without offloading the same plan keeps 2N/8 of gradients and 12N/8 of optimizer states.
  Plan plain = p;
  plain.layout.offload_optimizer = false;
  const auto without = estimate(plain);
  ASSERT_TRUE(without.ok());
  EXPECT_DOUBLE_EQ(without->memory.peak.optimizer_bytes, 12 * kParameters / 8);
  EXPECT_DOUBLE_EQ(without->memory.host_bytes_per_node, 0);
}

TEST(Offload, CpuAdamStepIsMemoryBoundOnTheNodesShareOfHostBandwidth) {
  const Plan p = zero_offload_plan();
  // Per parameter: read + write fp32 master and both Adam states 2 x 12, read the fp32 gradient
  // 4, write the fp16 weights 2 = 30 bytes. Shard N/8 = 164,706,816 parameters x 30 =
  // 4,941,204,480 bytes over 409.6 GB/s / 8 GPUs = 51.2 GB/s: 96.508 ms.
  EXPECT_DOUBLE_EQ(cpu_optimizer_bytes_per_parameter(p.training), 30);
  EXPECT_DOUBLE_EQ(host_state_bytes_per_parameter(p.training), 16);
  EXPECT_NEAR(cpu_optimizer_seconds(p, kParameters / 8), 0.0965079, 1e-7);

  const auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  const TimeBreakdown& b = e->time.breakdown;
  EXPECT_NEAR(b.optimizer_s, 4'941'204'480.0 / 51.2e9, 1e-9);
  // The updated fp16 shard goes back to the GPU on the critical path: 329,413,632 bytes over
  // 32 GB/s = 10.29 ms. The gradient copies (the same bytes per micro-batch) hide behind each
  // backward (about 35 ms of compute), so nothing else is exposed.
  EXPECT_NEAR(b.offload_s, 329'413'632.0 / 32e9, 1e-9);
  EXPECT_NEAR(b.total_s(), e->time.iteration_s, 1e-6);  // the simulator rounds each span to whole ns
}

TEST(Offload, ParameterOffloadLeavesOnlyTheGatheredLayersOnTheGpu) {
  Plan p = zero_offload_plan();
  p.layout.zero_stage = 3;
  p.layout.offload_params = true;
  const auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  // The fp16 shard 2N/8 moves to the host besides ZeRO-Offload's 16N/8; the GPU keeps the
  // largest unit in use, here the word embedding (51,200 x 2,048 = 104,857,600 parameters, more
  // than a layer's 50,358,272), the prefetched layer, and two of the unit's gradient buckets,
  // all in 2 bytes.
  EXPECT_DOUBLE_EQ(e->memory.peak.weights_bytes, 0);
  EXPECT_DOUBLE_EQ(e->memory.stages[0].host_bytes, 18 * kParameters / 8);
  EXPECT_DOUBLE_EQ(e->memory.peak.buffers_bytes, (104'857'600.0 + 50'358'272.0) * 2 + 2 * 104'857'600.0 * 2);
  // A slow host link exposes the per-layer fetches: 2N/8 = 329 MB per pass at 1 GB/s is 0.33 s
  // against tens of ms of compute.
  Plan slow = p;
  slow.cluster.host_link_bandwidth_bytes_per_s = 1e9;
  const auto s = estimate(slow);
  ASSERT_TRUE(s.ok());
  EXPECT_GT(s->time.breakdown.offload_s, e->time.breakdown.offload_s + 4 * 0.3);
}

TEST(Offload, ActivationOffloadKeepsTwoLayersOnTheGpu) {
  Plan p = zero_offload_plan();
  p.layout.offload_optimizer = false;
  Plan on = p;
  on.layout.offload_activations = true;
  const auto a = estimate(p);
  const auto b = estimate(on);
  ASSERT_TRUE(a.ok() && b.ok());
  // PP 1: one micro-batch in flight, 24 layers stored; 22 of them go to the host.
  const double moved = 22 * layer_activation_bytes(p);
  EXPECT_DOUBLE_EQ(a->memory.peak.activations_bytes - b->memory.peak.activations_bytes, moved);
  EXPECT_DOUBLE_EQ(b->memory.stages[0].host_bytes, moved);
  EXPECT_DOUBLE_EQ(b->memory.host_bytes_per_node, 8 * moved);
}

TEST(Offload, ValidationNamesTheFields) {
  Plan p = zero_offload_plan();
  p.layout.zero_stage = 0;
  p.layout.offload_params = true;
  auto d = validate(p);
  EXPECT_TRUE(has_error_on(d, "layout.offload_optimizer")) << join_messages(d);
  EXPECT_TRUE(has_error_on(d, "layout.offload_params")) << join_messages(d);

  Plan unknown = zero_offload_plan();
  unknown.cluster.host_link_bandwidth_bytes_per_s = 0;
  unknown.cluster.host_memory_bandwidth_bytes_per_s = 0;
  d = validate(unknown);
  EXPECT_TRUE(has_error_on(d, "cluster.host_link_gb_per_s")) << join_messages(d);
  EXPECT_TRUE(has_error_on(d, "cluster.host_memory_gb_per_s")) << join_messages(d);

  // Activations alone need the link but not the CPU's bandwidth.
  Plan activations = unknown;
  activations.layout.offload_optimizer = false;
  activations.layout.offload_activations = true;
  d = validate(activations);
  EXPECT_TRUE(has_error_on(d, "cluster.host_link_gb_per_s"));
  EXPECT_FALSE(has_error_on(d, "cluster.host_memory_gb_per_s"));
}

TEST(Offload, HostMemoryThatDoesNotFitIsAWarning) {
  Plan p = zero_offload_plan();
  p.cluster.host_memory_bytes = 16LL << 30;  // 16 GiB < 19.63 GiB needed
  const auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_FALSE(e->memory.host_fits);
  bool warned = false;
  for (const auto& w : e->warnings) warned |= w.field == "cluster.host_memory_gib";
  EXPECT_TRUE(warned);
  EXPECT_FALSE(to_json(*e)["memory"]["host"]["fits"].get<bool>());
}

TEST(Offload, PlanJsonRoundTripsTheFields) {
  Plan p = zero_offload_plan();
  p.layout.zero_stage = 3;
  p.layout.offload_params = true;
  p.layout.offload_activations = true;
  const auto json = to_json(p);
  EXPECT_EQ(json["layout"]["offload_params"], true);
  EXPECT_DOUBLE_EQ(json["cluster"]["host_link_gb_per_s"].get<double>(), 32);
  EXPECT_DOUBLE_EQ(json["cluster"]["host_memory_gib"].get<double>(), 1024);
  auto back = plan_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_TRUE(back->layout.offload_optimizer && back->layout.offload_params && back->layout.offload_activations);
  EXPECT_EQ(back->cluster.host_memory_bytes, p.cluster.host_memory_bytes);
  EXPECT_DOUBLE_EQ(back->cluster.host_link_bandwidth_bytes_per_s, 32e9);
  EXPECT_DOUBLE_EQ(back->cluster.host_memory_bandwidth_bytes_per_s, 409.6e9);
  EXPECT_EQ(to_json(*back), json);
  // A plan without offloading writes no offload keys.
  EXPECT_FALSE(to_json(LayoutSpec{}).contains("offload_optimizer"));
}

// The search costs offloading as estimate() does (it used to refuse it): every ranked layout
// keeps the plan's activation offloading, with its activations on the host.
TEST(Offload, TheSearchCostsActivationOffloading) {
  Plan p = zero_offload_plan();
  p.layout.offload_optimizer = false;
  p.layout.offload_activations = true;
  SearchOptions options;
  options.top = 3;
  auto r = search_layouts(p, options);
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_FALSE(r->layouts.empty());
  for (const auto& l : r->layouts) {
    EXPECT_TRUE(l.plan.layout.offload_activations);
    EXPECT_FALSE(l.plan.layout.offload_optimizer);
    auto again = estimate(l.plan);
    ASSERT_TRUE(again.ok()) << again.error_text();
    EXPECT_DOUBLE_EQ(again->memory.peak.total_bytes(), l.estimate.memory.peak.total_bytes());
  }
}

}  // namespace
}  // namespace plansight::estimator
