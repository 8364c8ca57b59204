// The operators of a layer and of the LM head (operator_costs.h, operator_report.h): their
// seconds and matmul FLOPs add up, pass by pass, to what the time model charges (layer_cost,
// moe_layer_cost, lm_head_cost) for dense, GQA, MLA and MoE models, TP with and without sequence
// parallelism, flash and standard attention, bf16, fp16 and fp8, every recomputation mode and a
// measured profile; one GEMM and one norm of GPT-3 175B checked by hand against the roofline.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/operator_report.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

struct Case {
  std::string label;
  Plan plan;
};

Plan with(const char* model, const char* gpu, std::int64_t tp, bool sp, AttentionKernel attention, Precision precision,
          Recompute recompute) {
  Plan p = default_plan();
  p.model = *find_model(model);
  p.cluster.gpu = *find_gpu(gpu);
  p.cluster.gpus = 64;
  p.layout = LayoutSpec{};
  p.layout.tp = tp;
  p.layout.sequence_parallel = sp;
  p.layout.recompute = recompute;
  p.training.attention = attention;
  p.training.precision = precision;
  p.training.grad_precision = precision == Precision::fp8 ? Precision::bf16 : precision;
  p.training.micro_batch = 2;
  p.training.global_batch = 256;
  p.training.seq_len = 4096;
  return p;
}

std::vector<Case> cases() {
  using A = AttentionKernel;
  using P = Precision;
  using R = Recompute;
  std::vector<Case> out;
  Plan gpt3 = default_plan();
  out.push_back({"GPT-3 175B default (TP 8, fp16, standard, full)", gpt3});
  gpt3.layout.sequence_parallel = true;
  gpt3.layout.recompute = Recompute::selective;
  out.push_back({"GPT-3 175B, SP, selective", gpt3});
  out.push_back({"Llama 3.1 8B GQA, TP 1, flash, bf16", with("llama-3.1-8b", "h100-sxm", 1, false, A::flash, P::bf16, R::none)});
  out.push_back({"Llama 3.1 70B GQA, TP 8 SP, flash, fp8, selective",
                 with("llama-3.1-70b", "h100-sxm", 8, true, A::flash, P::fp8, R::selective)});
  out.push_back({"Llama 3.1 70B GQA, TP 4, standard, bf16, selective",
                 with("llama-3.1-70b", "a100-80gb-sxm", 4, false, A::standard, P::bf16, R::selective)});
  Plan gpt2 = with("gpt2-124m", "v100-32gb-sxm", 2, false, A::standard, P::fp32, R::full);
  gpt2.training.seq_len = 1024;
  out.push_back({"GPT-2, TP 2, standard, fp32, full", gpt2});
  Plan cp = with("llama-3.1-8b", "h100-sxm", 2, true, A::flash, P::bf16, R::full);
  cp.layout.cp = 2;
  out.push_back({"Llama 3.1 8B, TP 2 SP, CP 2, flash, full", cp});
  Plan mixtral = with("mixtral-8x7b", "h100-sxm", 2, true, A::flash, P::bf16, R::full);
  mixtral.layout.ep = 4;
  out.push_back({"Mixtral 8x7B MoE, TP 2 SP, EP 4, full", mixtral});
  Plan deepseek = with("deepseek-v3", "h100-sxm", 4, true, A::flash, P::fp8, R::selective);
  deepseek.layout.ep = 16;
  deepseek.cluster.gpus = 256;
  out.push_back({"DeepSeek-V3 MLA + MoE, TP 4 SP, EP 16, fp8", deepseek});
  Plan deepseek_std = deepseek;
  deepseek_std.training.attention = AttentionKernel::standard;
  deepseek_std.training.precision = Precision::bf16;
  out.push_back({"DeepSeek-V3 MLA + MoE, standard, bf16, selective", deepseek_std});
  return out;
}

struct PassSums {
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0, recompute_s = 0;
  double forward_flops = 0, backward_input_flops = 0, backward_weight_flops = 0, recompute_flops = 0;
};

PassSums sums(const std::vector<OperatorCost>& ops) {
  PassSums s;
  for (const auto& op : ops) {
    const double flops = op.matmul ? op.flops : 0;
    switch (op.pass) {
      case OperatorPass::forward: s.forward_s += op.seconds, s.forward_flops += flops; break;
      case OperatorPass::backward_input: s.backward_input_s += op.seconds, s.backward_input_flops += flops; break;
      case OperatorPass::backward_weight: s.backward_weight_s += op.seconds, s.backward_weight_flops += flops; break;
      case OperatorPass::recompute: s.recompute_s += op.seconds, s.recompute_flops += flops; break;
    }
  }
  return s;
}

// Relative agreement to rounding: the sums run in a different order from layer_costs.cpp's.
void expect_close(double ours, double time_model, const std::string& what) {
  EXPECT_NEAR(ours, time_model, 1e-12 * std::max(1.0, std::abs(time_model))) << what;
}

void expect_sums_match(const PassSums& s, const PassCost& c, const std::string& what) {
  expect_close(s.forward_s, c.forward.compute_s, what + ": forward seconds");
  expect_close(s.backward_input_s, c.backward_input.compute_s, what + ": backward (input) seconds");
  expect_close(s.backward_weight_s, c.backward_weight.compute_s, what + ": backward (weight) seconds");
  expect_close(s.recompute_s, c.recompute.compute_s, what + ": recompute seconds");
  expect_close(s.forward_flops, c.forward.flops, what + ": forward FLOPs");
  expect_close(s.backward_input_flops, c.backward_input.flops, what + ": backward (input) FLOPs");
  expect_close(s.backward_weight_flops, c.backward_weight.flops, what + ": backward (weight) FLOPs");
  expect_close(s.recompute_flops, c.recompute.flops, what + ": recompute FLOPs");
}

TEST(OperatorCosts, OperatorsAddUpToTheTimeModelsLayerAndHead) {
  for (const auto& [label, plan] : cases()) {
    SCOPED_TRACE(label);
    ASSERT_FALSE(has_errors(validate(plan))) << join_messages(validate(plan));
    const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
    const CommLinks links = plan_links(plan, device.efficiency());
    const std::int64_t vocab = padded_vocab(plan.model.vocab, plan.layout.tp, plan.training.vocab_divisible_by);

    const auto dense = layer_operators(plan, device);
    ASSERT_GT(dense.size(), 8u);
    const PassCost dense_cost = layer_cost(plan, device, links);
    ASSERT_GT(dense_cost.forward.compute_s, 0);
    expect_sums_match(sums(dense), dense_cost, "dense layer");
    if (plan.layout.recompute != Recompute::none && plan.training.attention == AttentionKernel::standard) {
      EXPECT_GT(sums(dense).recompute_s, 0) << "recomputation re-runs at least the attention core";
    }
    if (plan.model.moe.enabled()) {
      const auto moe = moe_layer_operators(plan, device);
      EXPECT_GT(moe.size(), dense.size()) << "router, permutation and experts come on top";
      expect_sums_match(sums(moe), moe_layer_cost(plan, device, links), "MoE layer");
    }
    expect_sums_match(sums(lm_head_operators(plan, device, vocab)), lm_head_cost(plan, device, links, vocab), "LM head");

    // The report sums the same rows and puts what the time model charges beside them.
    auto report = operator_report(plan);
    ASSERT_TRUE(report) << report.error_text();
    expect_close(report->layer_operator_s, compute_seconds(report->layer), "report: layer");
    expect_close(report->lm_head_operator_s, compute_seconds(report->lm_head), "report: LM head");
    EXPECT_EQ(report->layer_kind, plan.model.moe.enabled() ? LayerKind::moe : LayerKind::dense);
    double layer_share = 0, head_share = 0;
    for (const auto& row : report->rows) (row.block == OperatorBlock::layer ? layer_share : head_share) += row.share;
    EXPECT_NEAR(layer_share, 1.0, 1e-9);
    EXPECT_NEAR(head_share, 1.0, 1e-9);
  }
}

TEST(OperatorCosts, MeasuredProfileIsSummedToo) {
  // A calibrated device: measured GEMMs scale the model, a measured fused attention replaces the
  // standard core, measured element-wise rates replace HBM streaming.
  HardwareProfile profile;
  profile.peak_flops = 1e12;
  profile.memory_bandwidth_bytes_per_s = 2e10;
  profile.kernel_overhead_s = 1e-6;
  profile.gemms.push_back({512, 512, 512, 1, Precision::fp32, 0.01});
  profile.attention.push_back({8, 256, 64, 0.003, 0.007});
  profile.elementwise_bytes_per_s["norm_forward"] = 3e9;
  profile.elementwise_bytes_per_s["softmax_backward"] = 5e9;
  Plan plan = with("gpt2-124m", "v100-32gb-sxm", 2, false, AttentionKernel::standard, Precision::fp32, Recompute::selective);
  plan.training.seq_len = 1024;
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu), &profile);
  const auto ops = layer_operators(plan, device);
  bool fused = false;
  for (const auto& op : ops) fused = fused || op.name == "fused attention";
  EXPECT_TRUE(fused);
  expect_sums_match(sums(ops), layer_cost(plan, device, plan_links(plan, device.efficiency())), "profiled layer");
  auto report = operator_report(plan, {.layer = std::nullopt, .profile = &profile});
  ASSERT_TRUE(report);
  // The roof is the fastest GEMM measured in the plan's precision (fp32: 2 x 512^3 FLOP in
  // 10 ms), not the profile's overall peak, which on a GPU is another precision's (a bf16
  // tensor-core rate about 15x fp32's); that peak stands in only where no GEMM of the precision
  // was measured.
  profile.gemms.push_back({512, 512, 512, 1, Precision::bf16, 0.0001});
  report = operator_report(plan, {.layer = std::nullopt, .profile = &profile});
  ASSERT_TRUE(report);
  EXPECT_DOUBLE_EQ(report->roofline.peak_flops_per_s, 2.0 * 512 * 512 * 512 / 0.01) << "the fp32 GEMM's rate is the roof";
  profile.gemms.clear();
  report = operator_report(plan, {.layer = std::nullopt, .profile = &profile});
  ASSERT_TRUE(report);
  EXPECT_DOUBLE_EQ(report->roofline.peak_flops_per_s, 1e12) << "without GEMM samples the profile's peak is the roof";
}

const OperatorRow& find_row(const OperatorReport& report, std::string_view name, OperatorPass pass) {
  for (const auto& row : report.rows) {
    if (row.op.name == name && row.op.pass == pass) return row;
  }
  ADD_FAILURE() << "no row " << name << " " << to_string(pass);
  static const OperatorRow none;
  return none;
}

// GPT-3 175B on A100 80GB (the default plan): micro-batch 1 x 2048 tokens, hidden 12288, TP 8,
// fp16. The QKV GEMM per TP rank is 2048 x (3 x 12288 / 8 = 4608) x 12288: 2 M N K =
// 231,928,233,984 FLOPs; its operands and output once in 2-byte elements, (M K + K N + M N) x 2 =
// (25,165,824 + 56,623,104 + 9,437,184) x 2 = 182,452,224 bytes; 1271.2 FLOP/byte, right of the
// A100's ridge of 312 TFLOP/s / 2039 GB/s = 153.0 FLOP/byte: compute bound. A norm over
// [2048, 12288] reads and writes 2 bytes per element (100,663,296 bytes) for 8 FLOPs per
// element: 2 FLOP/byte, memory bound.
TEST(OperatorReport, HandCheckedGemmAndNormOfGpt3) {
  const Plan plan = default_plan();
  auto report = operator_report(plan);
  ASSERT_TRUE(report) << report.error_text();
  EXPECT_DOUBLE_EQ(report->roofline.peak_flops_per_s, 312e12);
  EXPECT_DOUBLE_EQ(report->roofline.memory_bytes_per_s, 2039e9);
  EXPECT_NEAR(report->roofline.ridge_flops_per_byte(), 153.016, 1e-3);

  const OperatorRow& qkv = find_row(*report, "QKV", OperatorPass::forward);
  EXPECT_EQ(qkv.op.op_class, OperatorClass::gemm);
  EXPECT_DOUBLE_EQ(qkv.op.m, 2048);
  EXPECT_DOUBLE_EQ(qkv.op.n, 4608);
  EXPECT_DOUBLE_EQ(qkv.op.k, 12288);
  EXPECT_DOUBLE_EQ(qkv.op.batch, 1);
  EXPECT_DOUBLE_EQ(qkv.op.flops, 231'928'233'984.0);
  EXPECT_DOUBLE_EQ(qkv.op.bytes, 182'452'224.0);
  EXPECT_NEAR(qkv.intensity_flops_per_byte, 1271.18, 0.01);
  EXPECT_TRUE(qkv.compute_bound);
  EXPECT_DOUBLE_EQ(qkv.attainable_flops_per_s, 312e12);
  EXPECT_GT(qkv.achieved_flops_per_s, 0.5 * 312e12);
  EXPECT_LT(qkv.achieved_flops_per_s, 312e12) << "no operator beats its roof";
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  EXPECT_DOUBLE_EQ(qkv.op.seconds, device.gemm_seconds(2048, 4608, 12288)) << "the time model's own cost function";

  // Its backward GEMMs: dX = dY W^T is M x K x N, dW = X^T dY is K x N x M, the same FLOPs.
  const OperatorRow& dgrad = find_row(*report, "QKV", OperatorPass::backward_input);
  EXPECT_DOUBLE_EQ(dgrad.op.n, 12288);
  EXPECT_DOUBLE_EQ(dgrad.op.k, 4608);
  const OperatorRow& wgrad = find_row(*report, "QKV", OperatorPass::backward_weight);
  EXPECT_DOUBLE_EQ(wgrad.op.m, 12288);
  EXPECT_DOUBLE_EQ(wgrad.op.k, 2048);
  EXPECT_DOUBLE_EQ(wgrad.op.flops, qkv.op.flops);

  // Full recomputation: the forward runs again before the backward.
  EXPECT_DOUBLE_EQ(find_row(*report, "QKV", OperatorPass::recompute).op.seconds, qkv.op.seconds);

  const OperatorRow& norm = find_row(*report, "norm (attention)", OperatorPass::forward);
  EXPECT_DOUBLE_EQ(norm.op.bytes, 100'663'296.0);
  EXPECT_DOUBLE_EQ(norm.intensity_flops_per_byte, 2.0);
  EXPECT_FALSE(norm.compute_bound);
  EXPECT_DOUBLE_EQ(norm.attainable_flops_per_s, 2.0 * 2039e9);
  EXPECT_FALSE(norm.op.matmul) << "element-wise FLOPs are in no FLOP total";

  // Standard attention: QK^T over b x heads / t = 12 batches of 2048 x 2048 x 128.
  const OperatorRow& scores = find_row(*report, "scores Q K^T", OperatorPass::forward);
  EXPECT_DOUBLE_EQ(scores.op.batch, 12);
  EXPECT_DOUBLE_EQ(scores.op.flops, 2.0 * 2048 * 2048 * 128 * 12);
  EXPECT_TRUE(scores.op.attention_core);

  // Rows run forward, recompute, then backward from the layer's last kernel to its first.
  EXPECT_EQ(report->rows.front().op.name, "norm (attention)");
  std::size_t first_backward = 0;
  while (report->rows[first_backward].op.pass == OperatorPass::forward ||
         report->rows[first_backward].op.pass == OperatorPass::recompute) {
    ++first_backward;
  }
  EXPECT_EQ(report->rows[first_backward].op.name, "residual (MLP)");
  EXPECT_EQ(report->rows.back().block, OperatorBlock::lm_head);
  EXPECT_EQ(find_row(*report, "logits", OperatorPass::forward).op.n, 51200.0 / 8) << "vocabulary padded to 128 x TP";
}

TEST(OperatorReport, ErrorsNameTheField) {
  auto moe_of_dense = operator_report(default_plan(), {.layer = LayerKind::moe});
  ASSERT_FALSE(moe_of_dense);
  EXPECT_EQ(moe_of_dense.errors().front().field, "layer");
  Plan broken = default_plan();
  broken.training.micro_batch = 0;
  auto invalid = operator_report(broken);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.errors().front().field, "training.micro_batch") << invalid.error_text();

  Plan mixtral = with("mixtral-8x7b", "h100-sxm", 2, true, AttentionKernel::flash, Precision::bf16, Recompute::none);
  auto dense_of_moe = operator_report(mixtral, {.layer = LayerKind::dense});
  ASSERT_TRUE(dense_of_moe) << "a MoE model's dense layer can be asked for";
  EXPECT_EQ(dense_of_moe->layer_kind, LayerKind::dense);
}

// Tile and wave quantization by hand (NVIDIA's Matrix Multiplication Background guide), A100 with
// 108 SMs, fp16: C = 1024 x N x K with N = K = 768 and with 772. Candidate tiles and their
// relative speed in device_model.cpp; per wave a tile costs rows x cols / speed:
//   768: 128x64 -> 8 x 12 = 96 tiles, 1 wave, 8192 / 0.80 = 10240 (64x64: 192 tiles, 2 waves,
//        13213; 128x128: 48 tiles, 17617): 128x64, tiles full, 96 / 108 of the SMs busy.
//   772: 128x64 -> 8 x ceil(772 / 64) = 8 x 13 = 104 tiles, 1 wave, still the fastest; the edge
//        tiles hold 1024 x 772 / (104 x 8192) of useful work; 772 x 2 bytes = 1544 is not a
//        multiple of 16, so the operands are off the Tensor Cores' alignment.
TEST(OperatorReport, GemmTilingIsTheTileAndWaveQuantizationByHand) {
  const GpuSpec a100 = *find_gpu("a100-80gb-sxm");
  ASSERT_EQ(a100.sm_count, 108);
  const DeviceModel device(a100, Precision::fp16, default_efficiency(a100));
  const GemmTiling even = device.gemm_tiling(1024, 768, 768);
  EXPECT_EQ(even.tile_rows, 128);
  EXPECT_EQ(even.tile_cols, 64);
  EXPECT_EQ(even.tiles, 96);
  EXPECT_EQ(even.waves, 1);
  EXPECT_DOUBLE_EQ(even.tile_fill, 1.0);
  EXPECT_DOUBLE_EQ(even.wave_fill, 96.0 / 108.0);
  EXPECT_TRUE(even.aligned);
  const GemmTiling odd = device.gemm_tiling(1024, 772, 772);
  EXPECT_EQ(odd.tile_rows, 128);
  EXPECT_EQ(odd.tile_cols, 64);
  EXPECT_EQ(odd.tiles, 104);
  EXPECT_DOUBLE_EQ(odd.tile_fill, 1024.0 * 772.0 / (104.0 * 128.0 * 64.0));
  EXPECT_DOUBLE_EQ(odd.wave_fill, 104.0 / 108.0);
  EXPECT_FALSE(odd.aligned);
  // Four more columns double the compute (half rate off alignment, in the same single wave); the
  // kernel's fixed launch overhead, the same for both, keeps the ratio of their times under 2.
  const double ratio = device.gemm_seconds(1024, 772, 772) / device.gemm_seconds(1024, 768, 768);
  EXPECT_GT(ratio, 1.5);
  EXPECT_LT(ratio, 2.0);
  // The report carries each GEMM's tiling; other operators have none.
  Plan plan = default_plan();
  auto report = operator_report(plan);
  ASSERT_TRUE(report.ok()) << report.error_text();
  for (const auto& row : report->rows) {
    EXPECT_EQ(row.tiling.tiles > 0, row.op.op_class == OperatorClass::gemm) << row.op.name;
    if (row.tiling.tiles > 0) {
      EXPECT_GT(row.tiling.tile_fill * row.tiling.wave_fill, 0.0);
      EXPECT_LE(row.tiling.tile_fill * row.tiling.wave_fill, 1.0);
    }
  }
}

}  // namespace
}  // namespace plansight::estimator
