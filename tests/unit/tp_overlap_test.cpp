// layout.tp_overlap, Megatron-Core's --tp-comm-overlap: sequence parallelism's all-gathers and
// reduce-scatters run under the layer's linear GEMMs (the forward's under the forward's, the
// backward's under the input-gradient GEMMs) and only their excess is exposed; the rules that
// Megatron-LM's arguments.py sets; the plan file keeps it; the estimate and its timeline use it.
#include <gtest/gtest.h>

#include <algorithm>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/operator_costs.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {
namespace {

Plan gpt3_on_h100(std::int64_t gpus_per_node) {
  Plan p = default_plan();
  p.cluster = find_system("dgx-h100")->cluster;
  p.cluster.gpus = 1024;
  p.cluster.gpus_per_node = gpus_per_node;
  p.layout = LayoutSpec{};
  p.layout.tp = 8;
  p.layout.pp = 8;
  p.layout.sequence_parallel = true;
  p.training.precision = Precision::bf16;
  p.training.grad_precision = Precision::fp32;
  p.training.attention = AttentionKernel::flash;
  p.training.achieved_tflops = 0;
  p.training.mfu = 0;
  return p;
}

// One layer's costs without and with layout.tp_overlap (a MoE layer's with `moe`).
struct OverlapCosts {
  PassCost exposed, overlapped;
};
OverlapCosts overlap_costs(Plan plan, bool moe = false) {
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  const CommLinks links = plan_links(plan, device.efficiency());
  const auto cost = [&] { return moe ? moe_layer_cost(plan, device, links) : layer_cost(plan, device, links); };
  OverlapCosts out;
  plan.layout.tp_overlap = false;
  out.exposed = cost();
  plan.layout.tp_overlap = true;
  out.overlapped = cost();
  return out;
}

// The linear layers' GEMMs of one layer by block (attention: QKV and the output projection, by
// name; MLP: the rest) and pass, summed from the operator list.
struct LinearGemms final : OperatorSink {
  double forward_s[2] = {}, backward_input_s[2] = {};
  void add(const OperatorCost& op) override {
    if (!op.matmul || op.attention_core) return;
    const int block = op.name == "QKV" || op.name == "attention output" ? 0 : 1;
    if (op.pass == OperatorPass::forward) forward_s[block] += op.seconds;
    if (op.pass == OperatorPass::backward_input) backward_input_s[block] += op.seconds;
  }
};

// Each block's all-gather and reduce-scatter (half the pass's TP time) hide behind its own GEMMs.
double hidden_by_blocks(double pass_comm, const double (&gemm)[2]) {
  return std::min(pass_comm / 2, gemm[0]) + std::min(pass_comm / 2, gemm[1]);
}

void expect_hidden_under_linear_gemms(const Plan& base) {
  Plan plan = base;
  const auto [exposed, overlapped] = overlap_costs(plan);
  plan.layout.tp_overlap = true;
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  LinearGemms gemms;
  for_each_layer_operator(plan, device, gemms);
  ASSERT_GT(gemms.forward_s[0], 0);
  ASSERT_GT(gemms.backward_input_s[1], 0);

  const double forward_comm = exposed.forward.tp_comm_s;  // two all-gathers and two reduce-scatters
  const double backward_comm = exposed.backward_input.tp_comm_s;
  ASSERT_GT(forward_comm, 0);
  const double forward_hidden = hidden_by_blocks(forward_comm, gemms.forward_s);
  const double backward_hidden = hidden_by_blocks(backward_comm, gemms.backward_input_s);
  EXPECT_NEAR(overlapped.forward.tp_hidden_s, forward_hidden, 1e-12);
  EXPECT_NEAR(overlapped.forward.tp_comm_s, forward_comm - forward_hidden, 1e-12);
  EXPECT_NEAR(overlapped.backward_input.tp_hidden_s, backward_hidden, 1e-12);
  EXPECT_NEAR(overlapped.backward_input.tp_comm_s, backward_comm - backward_hidden, 1e-12);
  // Only the communication moves: same kernels, same bytes on the wire.
  EXPECT_DOUBLE_EQ(overlapped.forward.compute_s, exposed.forward.compute_s);
  EXPECT_DOUBLE_EQ(overlapped.backward_input.compute_s, exposed.backward_input.compute_s);
  EXPECT_DOUBLE_EQ(overlapped.forward.tp_bytes, exposed.forward.tp_bytes);
  EXPECT_EQ(overlapped.backward_weight.tp_comm_s, 0);
}

TEST(TpOverlap, NvlinkCollectivesHideCompletelyUnderTheLinearGemms) {
  const Plan plan = gpt3_on_h100(8);  // TP 8 inside a DGX: NVLink is fast against 12288-wide GEMMs
  expect_hidden_under_linear_gemms(plan);
  Plan overlapped = plan;
  overlapped.layout.tp_overlap = true;
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  const PassCost c = layer_cost(overlapped, device, plan_links(overlapped, device.efficiency()));
  EXPECT_EQ(c.forward.tp_comm_s, 0);
  EXPECT_GT(c.forward.tp_hidden_s, 0);
}

TEST(TpOverlap, CollectivesLongerThanTheGemmsExposeTheirExcess) {
  // TP 8 over nodes of 2 GPUs: the collectives cross the NICs and outlast the GEMMs.
  const Plan plan = gpt3_on_h100(2);
  expect_hidden_under_linear_gemms(plan);
  Plan overlapped = plan;
  overlapped.layout.tp_overlap = true;
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  const PassCost c = layer_cost(overlapped, device, plan_links(overlapped, device.efficiency()));
  EXPECT_GT(c.forward.tp_comm_s, 0) << "the excess stays exposed";
}

// A MoE layer without shared experts has no linear GEMM in its MLP block (the routed experts'
// grouped GEMMs are not Transformer Engine's overlapped linears): that block's all-gather and
// reduce-scatter stay exposed; the attention block's hide.
TEST(TpOverlap, MoeLayersHideOnlyTheAttentionBlocksCollectives) {
  Plan plan = gpt3_on_h100(8);
  plan.model = *find_model("mixtral-8x7b");
  plan.cluster.gpus = 64;
  plan.layout.tp = 2;
  plan.layout.pp = 1;
  plan.layout.ep = 8;
  plan.training.global_batch = 256;
  plan.training.seq_len = 4096;
  const auto [exposed, overlapped] = overlap_costs(plan, true);
  plan.layout.tp_overlap = true;
  const double block = exposed.forward.tp_comm_s / 2;
  ASSERT_GT(block, 0);
  EXPECT_NEAR(overlapped.forward.tp_comm_s, block, 1e-12) << "the MLP block's half stays exposed";
  EXPECT_NEAR(overlapped.forward.tp_hidden_s, block, 1e-12) << "the attention block's hides (NVLink, TP 2)";
  EXPECT_NEAR(overlapped.backward_input.tp_comm_s, exposed.backward_input.tp_comm_s / 2, 1e-12);
  EXPECT_TRUE(estimate(plan).ok()) << estimate(plan).error_text();
}

// MLA (DeepSeek-V3's attention): its down projections, q_a_proj and kv_a_proj_with_mqa, run whole
// on every TP rank (Megatron-Core's "duplicated" linears, not Transformer Engine's parallel ones):
// the attention block's collectives hide only under its TP-split GEMMs. Over nodes of 2 GPUs the
// collectives outlast those GEMMs, so the hidden time is exactly their time.
TEST(TpOverlap, MlaDownProjectionsHideNoTpCollective) {
  Plan plan = gpt3_on_h100(2);
  plan.model = *find_model("deepseek-v3");
  plan.model.moe = MoeSpec{};  // its dense layers: MLA attention and a dense MLP
  plan.model.layers = 64;
  plan.training.global_batch = 1024;
  plan.training.seq_len = 4096;
  const auto [exposed, overlapped] = overlap_costs(plan);
  plan.layout.tp_overlap = true;
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  // The attention block's GEMMs by name, the down projections apart.
  struct Attention final : OperatorSink {
    double split_s = 0, down_s = 0;
    void add(const OperatorCost& op) override {
      if (op.pass != OperatorPass::forward || !op.matmul || op.attention_core) return;
      if (op.name == "q_a_proj" || op.name == "kv_a_proj_with_mqa") down_s += op.seconds;
      if (op.name == "q_b_proj" || op.name == "kv_b_proj" || op.name == "o_proj") split_s += op.seconds;
    }
  } attention;
  for_each_layer_operator(plan, device, attention);
  ASSERT_GT(attention.down_s, 0);
  ASSERT_GT(attention.split_s, 0);
  LinearGemms gemms;  // (by name: its MLP block is every GEMM but QKV and the attention output)
  for_each_layer_operator(plan, device, gemms);
  const double block = exposed.forward.tp_comm_s / 2;
  ASSERT_GT(block, attention.split_s + attention.down_s) << "the collectives outlast the attention block's GEMMs";
  const double mlp_hidden = std::min(block, gemms.forward_s[1] - attention.split_s - attention.down_s);
  EXPECT_NEAR(overlapped.forward.tp_hidden_s, attention.split_s + mlp_hidden, 1e-12);
}

TEST(TpOverlap, TheEstimateAndItsTimelineUseIt) {
  Plan plan = gpt3_on_h100(8);
  const auto exposed = estimate(plan);
  plan.layout.tp_overlap = true;
  const auto overlapped = estimate(plan);
  ASSERT_TRUE(exposed.ok() && overlapped.ok()) << overlapped.error_text();
  EXPECT_GT(exposed->time.breakdown.tp_comm_s, 0);
  // What stays exposed is the embedding's reduce-scatter and the LM head's all-gather and
  // reduce-scatter: Megatron runs them outside Transformer Engine's overlapped linear layers
  // (one of each per micro-batch against four of each per layer: 96 layers over 8 stages).
  EXPECT_GT(overlapped->time.breakdown.tp_comm_s, 0);
  EXPECT_LT(overlapped->time.breakdown.tp_comm_s, 0.02 * exposed->time.breakdown.tp_comm_s);
  EXPECT_LT(overlapped->time.iteration_s, exposed->time.iteration_s);
  EXPECT_NEAR(overlapped->time.breakdown.total_s(), overlapped->time.iteration_s, 1e-9 * overlapped->time.iteration_s);
  // The hidden collectives are drawn beside the compute (the "hidden comm" stream 2) under the
  // TP group's name; hidden and exposed spans together carry the breakdown's TP bytes.
  auto predicted = predict_time(plan, overlapped->padded_vocab);
  ASSERT_TRUE(predicted.ok()) << predicted.error_text();
  const std::string name = "TP all-gather/reduce-scatter · tp 8 · in a node";
  std::int64_t hidden_ns = 0;
  double bytes = 0;
  for (const Track& track : predicted->timeline.tracks) {
    if (track.rank != 0 || track.lane != Lane::communication) continue;
    for (const Span& s : track.spans) {
      if (predicted->timeline.name_of(s) != name) continue;
      bytes += s.bytes;
      if (track.stream == 2) hidden_ns += s.duration_ns;
    }
  }
  EXPECT_GT(hidden_ns, 0);
  EXPECT_NEAR(bytes, predicted->breakdown.tp_bytes, 1e-6 * bytes) << "rank 0, the first stage, as the breakdown counts";
}

// ZeRO-3's prefetched gathers fill the op's compute on the first hidden track; TP's collectives,
// which run beside them on NVLink, get a track of their own and keep all their bytes.
TEST(TpOverlap, BesideZeroThreesHiddenGathersTpKeepsItsOwnTrack) {
  Plan plan = gpt3_on_h100(8);
  plan.layout.pp = 1;
  plan.layout.zero_stage = 3;
  plan.layout.tp_overlap = true;
  plan.training.global_batch = 1024;
  auto e = estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  auto predicted = predict_time(plan, e->padded_vocab);
  ASSERT_TRUE(predicted.ok()) << predicted.error_text();
  const std::string name = "TP all-gather/reduce-scatter · tp 8 · in a node";
  double tp_bytes = 0;
  int hidden_tracks = 0;
  for (const Track& track : predicted->timeline.tracks) {
    if (track.rank != 0 || track.lane != Lane::communication) continue;
    hidden_tracks += track.stream >= 2;
    for (const Span& s : track.spans) tp_bytes += predicted->timeline.name_of(s) == name ? s.bytes : 0;
  }
  EXPECT_EQ(hidden_tracks, 2);
  EXPECT_NEAR(tp_bytes, predicted->breakdown.tp_bytes, 1e-6 * tp_bytes);
  EXPECT_DOUBLE_EQ(predicted->iteration_s, e->time.iteration_s) << "drawing changes no figure";
}

TEST(TpOverlap, NeedsTensorParallelismWithSequenceParallelismAndSurvivesThePlanFile) {
  // Megatron-LM, arguments.py: "Tensor parallel communication/GEMM overlap can happen only when
  // sequence parallelism is enabled".
  Plan plan = gpt3_on_h100(8);
  plan.layout.tp_overlap = true;
  Plan no_sp = plan;
  no_sp.layout.sequence_parallel = false;
  auto e = estimate(no_sp);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.errors().front().field, "layout.tp_overlap");
  EXPECT_NE(e.errors().front().message.find("sequence_parallel"), std::string::npos) << e.errors().front().message;
  Plan no_tp = plan;
  no_tp.layout.tp = 1;
  no_tp.layout.sequence_parallel = false;
  e = estimate(no_tp);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.errors().front().field, "layout.tp_overlap");
  EXPECT_NE(e.errors().front().message.find("tp > 1"), std::string::npos) << e.errors().front().message;

  auto back = plan_from_json(to_json(plan));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_TRUE(back->layout.tp_overlap);
  // Off, the plan file has no such key (dense plans keep their JSON).
  EXPECT_FALSE(to_json(gpt3_on_h100(8))["layout"].contains("tp_overlap"));
}

}  // namespace
}  // namespace plansight::estimator
