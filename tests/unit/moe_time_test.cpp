// MoE in the FLOP count and the time model: model FLOPs from the active parameters, the
// expert all-to-all over the links the EP group spans, grouped-GEMM efficiency at small token
// counts per expert, the assumed imbalance, and the layout search enumerating EP and ETP.
#include <gtest/gtest.h>

#include "../support/moe_models.h"
#include "plansight/estimator/device_model.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/flops.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/layout_search.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

Plan mixtral_on(const char* system, std::int64_t gpus, std::int64_t ep) {
  Plan p = default_plan();
  p.model = *find_model("mixtral-8x7b");
  p.cluster = find_system(system)->cluster;
  p.cluster.gpus = gpus;
  p.layout = LayoutSpec{};
  p.layout.ep = ep;
  p.layout.etp = 1;
  p.layout.zero_stage = 1;
  p.layout.pp = 4;
  p.training.seq_len = 4096;
  p.training.micro_batch = 1;
  p.training.global_batch = 256;
  p.training.attention = AttentionKernel::flash;
  p.training.achieved_tflops = 0;
  p.training.mfu = 0;
  return p;
}

// Forward GEMM FLOPs per token of a Mixtral 8x7B MoE layer: 2 x (attention 41,943,040 + router
// 8 x 4096 + two experts of 3 x 4096 x 14336) = 2 x 394,297,344: the active weights, not all 8.
TEST(MoeFlops, AMoeLayerCountsOnlyTheActiveExperts) {
  const ModelSpec m = testing::mixtral_8x7b();
  const ForwardFlopsPerToken f = forward_flops_per_token(m, 4096, m.vocab, false);
  EXPECT_DOUBLE_EQ(f.moe_layer_dense, 2.0 * 394'297'344);
  EXPECT_DOUBLE_EQ(f.layer_attention, 4.0 * 4096 * 4096);
  // The model FLOPs of an iteration: 3 x tokens x (32 MoE layers + the head).
  const FlopsEstimate it = iteration_flops(m, 4096, 1.0, m.vocab, Recompute::none, false);
  EXPECT_DOUBLE_EQ(it.model_per_iteration, 3 * (32 * (f.moe_layer_dense + f.layer_attention) + f.lm_head));
  // Close to 6 x active parameters per token, as Kaplan et al.'s 6N counts, plus attention.
  const double active = count_parameters(m).active;
  EXPECT_NEAR((it.model_per_iteration - 3 * 32 * f.layer_attention) / (6 * active), 1.0, 0.011);
}

TEST(MoeFlops, MlaAndMtpFlopsByHand) {
  const ModelSpec m = testing::deepseek_v3();
  const ForwardFlopsPerToken f = forward_flops_per_token(m, 4096, m.vocab, true);
  // MLA projections (q_a, q_b, kv_a, kv_b, o): 2 x 187,107,328 minus the two latent norms' 2,048.
  EXPECT_DOUBLE_EQ(f.moe_layer_dense - 2.0 * (256 * 7168 + 9 * 44'040'192.0), 2.0 * (187'107'328 - 2048));
  // Scores over 192 dims and values over 128, causal: 2 s heads (192 + 128) / 2.
  EXPECT_DOUBLE_EQ(f.layer_attention, 2.0 * 4096 * 128 * 320 * 0.5);
  const FlopsEstimate with = iteration_flops(m, 4096, 1.0, m.vocab, Recompute::none, true);
  ModelSpec no_mtp = m;
  no_mtp.mtp_modules = 0;
  const FlopsEstimate without = iteration_flops(no_mtp, 4096, 1.0, m.vocab, Recompute::none, true);
  EXPECT_DOUBLE_EQ(with.model_per_iteration - without.model_per_iteration,
                   3 * (f.moe_layer_dense + f.layer_attention + 4.0 * 7168 * 7168 + f.lm_head));
}

TEST(MoeTime, AllToAllCrossesTheNetworkWhenTheEpGroupSpansNodes) {
  Plan inside = mixtral_on("dgx-h100", 32, 8);  // ep 8 of 8 ranks per node: NVLink
  Plan across = inside;
  across.cluster.gpus_per_node = 4;             // the same group over two nodes
  const auto a = estimate(inside), b = estimate(across);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error_text() << b.error_text();
  EXPECT_GT(a->time.breakdown.ep_comm_s, 0);
  EXPECT_GT(b->time.breakdown.ep_comm_s, 3 * a->time.breakdown.ep_comm_s)
      << "NICs give a GPU 50 GB/s, NVLink 450 GB/s";
  EXPECT_DOUBLE_EQ(a->time.breakdown.compute_s, b->time.breakdown.compute_s);
}

TEST(MoeTime, CombinedOneFOneBHidesTheAllToAllUnderThePartnerPass) {
  // Per MoE layer and micro-batch: exposed = max(0, a2a - the partner pass's compute), forward
  // against the backward's compute and backward against the forward's (combined 1F1B).
  Plan plan = mixtral_on("dgx-h100", 32, 8);
  plan.cluster.gpus_per_node = 4;  // the all-to-all crosses nodes, so it is large
  plan.layout.vpp = 2;             // Megatron-Core pairs micro-batches with virtual stages only
  plan.layout.schedule = PipelineSchedule::interleaved;
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  const CommLinks links = plan_links(plan, device.efficiency());
  const PassCost exposed = moe_layer_cost(plan, device, links);
  plan.layout.ep_overlap = true;
  const PassCost hidden = moe_layer_cost(plan, device, links);
  const double a2a = exposed.forward.ep_comm_s;  // dispatch + combine of one pass
  ASSERT_GT(a2a, 0);
  const double backward_compute = exposed.backward_input.compute_s + exposed.backward_weight.compute_s;
  EXPECT_DOUBLE_EQ(hidden.forward.ep_comm_s, std::max(0.0, a2a - backward_compute));
  EXPECT_DOUBLE_EQ(hidden.backward_input.ep_comm_s, std::max(0.0, a2a - exposed.forward.compute_s));
  EXPECT_DOUBLE_EQ(hidden.forward.compute_s, exposed.forward.compute_s) << "only the communication changes";
  const auto slow = estimate(mixtral_on("dgx-h100", 32, 8));
  Plan overlapped_plan = plan;
  const auto fast = estimate(overlapped_plan);
  ASSERT_TRUE(slow.ok() && fast.ok()) << fast.error_text();
  // Validation: nothing to overlap without EP; pipeline parallelism needs virtual stages.
  Plan no_ep = plan;
  no_ep.layout.ep = 1;
  EXPECT_EQ(estimate(no_ep).errors().front().field, "layout.ep_overlap");
  Plan no_vpp = plan;
  no_vpp.layout.vpp = 1;
  no_vpp.layout.schedule = PipelineSchedule::one_f_one_b;
  EXPECT_EQ(estimate(no_vpp).errors().front().field, "layout.ep_overlap");
  // The plan file keeps it.
  auto back = plan_from_json(to_json(plan));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_TRUE(back->layout.ep_overlap);
}

TEST(MoeTime, AnExposedAllToAllAcrossNodesIsFlagged) {
  Plan p = mixtral_on("dgx-h100", 32, 8);
  p.cluster.gpus_per_node = 2;  // the 8 EP ranks on 4 nodes: 6/8 of every dispatch on the NIC,
  p.cluster.inter_node_bandwidth_bytes_per_s = 12.5e9;  // a 100 Gb/s NIC per GPU
  const auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  ASSERT_GT(e->time.breakdown.ep_comm_s, 0.25 * e->time.iteration_s);
  std::string message;
  for (const auto& w : e->warnings) {
    if (w.field == "layout.ep") message = w.message;
  }
  EXPECT_NE(message.find("spans nodes of 2 GPUs"), std::string::npos) << message;
  const auto inside = estimate(mixtral_on("dgx-h100", 32, 8));
  ASSERT_TRUE(inside.ok());
  for (const auto& w : inside->warnings) EXPECT_NE(w.field, "layout.ep") << w.message;
}

TEST(MoeTime, NoExpertParallelismMeansNoAllToAll) {
  const auto e = estimate(mixtral_on("dgx-h100", 32, 1));
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_EQ(e->time.breakdown.ep_comm_s, 0);
  EXPECT_FALSE(to_json(*e)["time"]["breakdown"].contains("ep_comm_s"));
}

TEST(MoeTime, ImbalanceSlowsTheBusiestGpu) {
  Plan balanced = mixtral_on("dgx-h100", 32, 8);
  Plan skewed = balanced;
  skewed.model.moe.load_imbalance = 1.5;
  const auto a = estimate(balanced), b = estimate(skewed);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(b->time.iteration_s, a->time.iteration_s);
  EXPECT_GT(b->time.breakdown.ep_comm_s, 1.4 * a->time.breakdown.ep_comm_s);
  EXPECT_DOUBLE_EQ(a->flops.model_per_iteration, b->flops.model_per_iteration) << "model FLOPs do not change";
}

// Grouped GEMMs pad every expert's tokens to whole tiles (device_model.cpp's tile and wave
// quantisation): with few tokens per expert, the expert FLOPs take longer per FLOP.
TEST(MoeTime, GroupedGemmsLoseEfficiencyAtFewTokensPerExpert) {
  Plan p = mixtral_on("dgx-h100", 32, 8);
  p.model.moe.experts = 64;  // 8 local experts on each of 8 GPUs
  p.model.moe.top_k = 2;
  p.training.seq_len = 256;  // 256 tokens x 2 copies over 64 experts: 8 per expert
  const DeviceModel dev(p.cluster.gpu, p.training.precision, default_efficiency(p.cluster.gpu));
  const CommLinks links = plan_links(p, dev.efficiency());
  const PassCost small = moe_layer_cost(p, dev, links);
  p.training.seq_len = 8192;  // 256 per expert
  const PassCost large = moe_layer_cost(p, dev, links);
  const double small_rate = small.forward.flops / small.forward.compute_s;
  const double large_rate = large.forward.flops / large.forward.compute_s;
  EXPECT_LT(small_rate, 0.5 * large_rate);
}

TEST(MoeTime, DenseModelsHaveNoExpertTerms) {
  Plan p = default_plan();
  const auto e = estimate(p);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->time.breakdown.ep_comm_s, 0);
  EXPECT_DOUBLE_EQ(e->active_parameters, e->parameters);
  EXPECT_FALSE(to_json(*e).contains("active_parameters"));
}

TEST(MoeSearch, EnumeratesExpertParallelismAndRanksValidLayouts) {
  Plan base = mixtral_on("dgx-h100", 24, 1);
  base.layout = LayoutSpec{};
  base.training.global_batch = 240;
  SearchOptions options;
  options.space.micro_batch = {1};
  options.space.recompute = {Recompute::selective, Recompute::full};
  options.top = 3;
  const auto r = search_layouts(base, options);
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_FALSE(r->layouts.empty());
  bool any_ep = false;
  for (const auto& l : r->layouts) {
    EXPECT_FALSE(has_errors(validate(l.plan))) << describe(l.candidate);
    EXPECT_TRUE(l.estimate.memory.fits);
    any_ep |= l.candidate.ep > 1;
  }
  EXPECT_TRUE(any_ep) << "the best layouts of an 8-expert model on 24 GPUs use expert parallelism: "
                      << describe(r->layouts.front().candidate);
  bool expert_rejections = false;
  for (const auto& j : r->rejections) expert_rejections |= j.reason == RejectReason::expert_layout;
  EXPECT_TRUE(expert_rejections) << "ep 8 cannot fold into 12 ranks per stage";
  EXPECT_EQ(r->enumerated, r->fitting + [&] {
    std::int64_t n = 0;
    for (const auto& j : r->rejections) n += j.count;
    return n;
  }());
}

// DeepSeek-V3's 61 layers divide by no pipeline size but 61: the search splits them unevenly
// (the earliest stages one layer more) instead of rejecting every pipeline.
TEST(MoeSearch, DeepSeekV3GetsUnevenPipelineStages) {
  Plan base = default_plan();
  base.model = *find_model("deepseek-v3");
  base.cluster = find_system("dgx-h100")->cluster;
  base.cluster.gpus = 256;
  base.layout = LayoutSpec{};
  base.training.seq_len = 4096;
  base.training.global_batch = 512;
  base.training.attention = AttentionKernel::flash;
  base.training.precision = Precision::bf16;
  base.training.achieved_tflops = 0;
  base.training.mfu = 0;
  SearchOptions options;
  options.space.micro_batch = {1};
  options.space.pp = {16};
  options.space.tp = {1};
  options.space.recompute = {Recompute::full};
  options.top = 2;
  const auto r = search_layouts(base, options);
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_FALSE(r->layouts.empty()) << rejection_summary(*r);
  const Plan& best = r->layouts.front().plan;
  EXPECT_EQ(best.layout.stage_layers,
            (std::vector<std::int64_t>{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3}));
  EXPECT_FALSE(has_errors(validate(best)));
  EXPECT_GT(best.layout.ep, 1);
}

TEST(MoeSearch, FixedEpIsRespected) {
  Plan base = mixtral_on("dgx-h100", 16, 1);
  base.layout = LayoutSpec{};
  SearchOptions options;
  options.space.micro_batch = {1};
  options.space.ep = {4};
  options.space.etp = {1};
  const auto r = search_layouts(base, options);
  ASSERT_TRUE(r.ok()) << r.error_text();
  for (const auto& l : r->layouts) {
    EXPECT_EQ(l.plan.layout.ep, 4);
    EXPECT_EQ(l.plan.layout.etp, 1);
  }
}

}  // namespace
}  // namespace plansight::estimator
