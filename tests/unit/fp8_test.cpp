// FP8 training as Transformer Engine runs it. Memory (memory.cpp, moe_memory.cpp): GEMM inputs
// saved as fp8 copies (the attention output's on top of its 16-bit copy under flash attention),
// and 2 bytes of fp8 weight copies per layer parameter beside the 16-bit weights, none under
// ZeRO-3. Time (operator_emitter.h): the cast kernels of every fp8 GEMM. Hand-checked values on a
// small GPT layer.
#include <gtest/gtest.h>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/operator_costs.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

// h = 1024, 16 heads, f = 4h = 4096, 4 layers, GPT-2 style (biases, LayerNorm, GeLU); one GPU,
// one sequence of 1024 tokens, no dropout, on an H100.
Plan small_gpt(Precision precision, AttentionKernel attention) {
  Plan p = default_plan();
  p.model = *find_model("gpt2-124m");
  p.model.name = "small";
  p.model.layers = 4;
  p.model.hidden = 1024;
  p.model.heads = 16;
  p.model.kv_heads = 16;
  p.model.head_dim = 0;
  p.model.ffn_hidden = 4096;
  p.model.dropout = false;
  p.cluster = find_system("dgx-h100")->cluster;  // fp8 needs Hopper
  p.cluster.gpus = 1;
  p.layout = LayoutSpec{};
  p.layout.dp = 1;
  p.training.micro_batch = 1;
  p.training.global_batch = 1;
  p.training.seq_len = 1024;
  p.training.precision = precision;
  p.training.grad_precision = gradient_precision_for(precision);
  p.training.attention = attention;
  return p;
}

TEST(Fp8Memory, GemmInputsAreSavedAsFp8Copies) {
  // Per token, bf16 -> fp8: the two norm outputs (QKV and MLP-up inputs) 2 + 2 -> 1 + 1 bytes x h,
  // the MLP-down input 2 -> 1 byte x f, the output projection's input 2 -> 1 byte x q without
  // flash attention and 2 -> 2 + 1 with it (flash keeps its 16-bit output). 1024 tokens:
  // standard attention -1024 x (2 x 1024 + 1024 + 4096) = -7,340,032 bytes per layer,
  // flash -1024 x (2 x 1024 - 1024 + 4096) = -5,242,880.
  for (auto [attention, delta] : {std::pair{AttentionKernel::standard, -7'340'032.0}, std::pair{AttentionKernel::flash, -5'242'880.0}}) {
    const Plan bf16 = small_gpt(Precision::bf16, attention);
    const Plan fp8 = small_gpt(Precision::fp8, attention);
    EXPECT_DOUBLE_EQ(layer_activation_bytes(fp8) - layer_activation_bytes(bf16), delta);
    // Full recomputation stores the layer input only, in 16 bits either way.
    EXPECT_DOUBLE_EQ(layer_activation_bytes(fp8, Recompute::full), layer_activation_bytes(bf16, Recompute::full));
  }
}

TEST(Fp8Memory, LayerWeightsGetTwoBytesOfFp8CopiesExceptUnderZero3) {
  // A GPT-2 style layer of h = 1024 holds 12 h^2 + 13 h = 12,596,224 parameters; four layers
  // with a rowwise and a columnwise fp8 copy: 2 x 4 x 12,596,224 = 100,769,792 bytes more than
  // bf16, whose weights and gradients are the same 2 bytes each (fp8 keeps 16-bit gradients).
  Plan bf16 = small_gpt(Precision::bf16, AttentionKernel::flash);
  Plan fp8 = small_gpt(Precision::fp8, AttentionKernel::flash);
  auto b = estimate(bf16);
  auto f = estimate(fp8);
  ASSERT_TRUE(b.ok()) << b.error_text();
  ASSERT_TRUE(f.ok()) << f.error_text();
  EXPECT_DOUBLE_EQ(count_parameters(fp8.model, f->padded_vocab).layer.total(), 12'596'224.0);
  EXPECT_DOUBLE_EQ(f->memory.peak.weights_bytes - b->memory.peak.weights_bytes, 100'769'792.0);
  EXPECT_DOUBLE_EQ(f->memory.peak.gradients_bytes, b->memory.peak.gradients_bytes);
  bf16.layout.zero_stage = fp8.layout.zero_stage = 3;
  EXPECT_DOUBLE_EQ(estimate(fp8)->memory.peak.weights_bytes, estimate(bf16)->memory.peak.weights_bytes);
}

TEST(Fp8Memory, MoeLayersSaveTheirExpertInputsAsFp8Too) {
  // Mixtral 8x7B: every routed copy's dispatched input and its experts' down input shrink to 1
  // byte, so fp8 stores less activation than bf16, though not half (norm inputs, Q, K, V and
  // the MLP-up outputs stay in 16 bits).
  Plan p = default_plan();
  p.model = *find_model("mixtral-8x7b");
  p.layout = LayoutSpec{};
  p.layout.tp = 8;
  p.layout.ep = 8;
  p.layout.sequence_parallel = true;
  p.cluster = find_system("dgx-h100")->cluster;
  p.cluster.gpus = 64;
  p.training.attention = AttentionKernel::flash;
  p.training.precision = Precision::bf16;
  p.training.grad_precision = Precision::bf16;
  auto bf16 = estimate(p);
  p.training.precision = Precision::fp8;
  auto fp8 = estimate(p);
  ASSERT_TRUE(bf16.ok()) << bf16.error_text();
  ASSERT_TRUE(fp8.ok()) << fp8.error_text();
  EXPECT_LT(fp8->memory.peak.activations_bytes, bf16->memory.peak.activations_bytes);
  EXPECT_GT(fp8->memory.peak.activations_bytes, 0.5 * bf16->memory.peak.activations_bytes);
}

TEST(Fp8Time, EveryFp8GemmPaysItsCasts) {
  // Per layer of 1024 tokens: forward, the output projection's input (q = 1024 wide; the QKV and
  // MLP inputs come cast from TE's fused norm and activation): 1024 x 1024 x 4 B = 4,194,304 B;
  // backward, every GEMM's output gradient, QKV 3072 + projection 1024 + MLP up 4096 + MLP down
  // 1024 = 9216 wide: 1024 x 9216 x 4 B = 37,748,736 B. None in bf16.
  for (Precision precision : {Precision::fp8, Precision::bf16}) {
    const Plan plan = small_gpt(precision, AttentionKernel::flash);
    const DeviceModel device(plan.cluster.gpu, precision, default_efficiency(plan.cluster.gpu));
    double forward = 0, backward = 0, seconds = 0;
    for (const OperatorCost& op : layer_operators(plan, device)) {
      if (!op.name.starts_with("fp8 cast")) continue;
      (op.pass == OperatorPass::forward ? forward : backward) += op.bytes;
      seconds += op.seconds;
    }
    const bool fp8 = precision == Precision::fp8;
    EXPECT_DOUBLE_EQ(forward, fp8 ? 4'194'304.0 : 0.0);
    EXPECT_DOUBLE_EQ(backward, fp8 ? 37'748'736.0 : 0.0);
    // Memory bound: at least the bytes over the H100's 3.35 TB/s.
    if (fp8) {
      EXPECT_GE(seconds, (4'194'304.0 + 37'748'736.0) / 3.35e12);
    }
  }
}

}  // namespace
}  // namespace plansight::estimator
