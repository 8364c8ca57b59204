// Per-GPU memory of an MoE model against a published measurement: a 4-layer Mixtral-8x2B trained
// with Megatron-Core on one 8-GPU node at TP 1 and 2, micro-batch 1 and 2 (Y. Bai,
// ISEEKYAN/mbridge memory_estimator/README.md, "Some result comparison", commit fa02d1a,
// 2025-07-16). The figures are copied below; nothing is read from the source at test time.
#include <gtest/gtest.h>

#include <cmath>

#include "../support/moe_models.h"
#include "../support/published.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The README links its model as "Mixtral-8x2B with reduced layers" (model_configs/test_small.yaml,
// not in the repository). Mixtral-8x2B is yanring/Megatron-MoE-ModelZoo
// model_configs/benchmarking/Mixtral-8x2B.yaml (commit 78fd4d6): hidden 2048, 16 heads, 8 query
// groups, swiglu, RMSNorm, untied embeddings, no biases, 8 experts top-2, Llama2 tokenizer (32000),
// --use-flash-attn, --sequence-parallel, --use-distributed-optimizer, --bf16. No FFN size is
// given, so Megatron's swiglu default int(4h * 2/3 / 64) * 64 = 5440 applies; the README's printed
// module tree confirms it (linear_fc1 22,282,240 = 2048 x 2 x 5440 per expert). 4 layers.
ModelSpec mixtral_8x2b_4_layers() {
  ModelSpec m = testing::llama_style(4, 2048, 16, 8, 5440, 32000);
  m.name = "mixtral-8x2b-4-layers";
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 5440;
  return m;
}

// One node of 8 GPUs, no pipeline, all 8 experts on every GPU (the README's estimate of the TP 1
// run holds "8 x MLP" per layer on one GPU, and its 8.74 GB of model states need EP 1), Megatron's
// distributed optimizer (ZeRO-1 over DP = 8 / TP; the README prints num_bytes_per_parameter=7.5 =
// 6 + 12/8 at TP 1), bf16 weights with fp32 gradients (Megatron's --bf16 accumulates in fp32).
// Recomputation is not mentioned: Megatron's default, none. The README does not name the GPU.
Plan measured_plan(std::int64_t tp, std::int64_t micro_batch) {
  Plan p = testing::a100_plan(mixtral_8x2b_4_layers(), 8);
  p.layout.tp = tp;
  p.layout.pp = 1;
  p.layout.ep = 1;
  p.layout.etp = 0;  // = tp, as Megatron-Core defaults expert TP to TP
  p.layout.zero_stage = 1;
  p.layout.sequence_parallel = tp > 1;
  p.layout.recompute = Recompute::none;
  p.training.precision = Precision::bf16;
  p.training.grad_precision = Precision::fp32;
  p.training.attention = AttentionKernel::flash;
  p.training.seq_len = 4096;
  p.training.micro_batch = micro_batch;
  p.training.global_batch = (8 / tp) * micro_batch;  // one micro-batch per iteration (PP 1)
  p.training.achieved_tflops = 150;                  // memory only: no time prediction needed
  return p;
}

// One row of the README's table, in its "GB". Its estimator prints "8947.57 MB" as "8.74 GB",
// i.e. GB = 1024 MB = GiB, as PyTorch's memory counters are read; so these are GiB.
struct Row {
  std::int64_t tp, micro_batch;
  double real_gib, real_model_gib, real_activation_gib;
};
constexpr Row kRows[] = {
    {2, 1, 6.6, 5.3, 1.3},
    {2, 2, 8.0, 5.3, 2.7},
    {1, 1, 11.2, 8.8, 2.4},
    {1, 2, 13.8, 8.8, 5.0},
};
// The README prints one decimal: any printed value is within half a unit of what was measured.
constexpr double kPrintedHalfUnitGiB = 0.05;

TEST(MoeMemoryPublished, ModelMatchesTheReadmesModuleTree) {
  // The README's estimate lists 1,250,961,408 parameters per GPU at TP 1 without the input norm
  // (fused into TE's linear_qkv) and without the router gate (8 x 2048), per layer.
  const ParameterCounts c = count_parameters(mixtral_8x2b_4_layers());
  EXPECT_DOUBLE_EQ(c.total, 1'250'961'408.0 + 4 * (2048.0 + 8 * 2048.0));
  EXPECT_DOUBLE_EQ(c.routed_expert, 3.0 * 2048 * 5440);
}

// "Real Model": weights, gradients and optimizer states. Tolerance: half a printed unit plus 1%
// of the value, for what Megatron holds beside the four buffers of the byte model (padding of its
// contiguous gradient buffer, module buffers). Ours: 8.74 vs 8.8 and 5.24 vs 5.3 (-0.7%, -1.1%).
TEST(MoeMemoryPublished, ModelStatesMatchTheMeasurement) {
  for (const Row& r : kRows) {
    const Plan p = measured_plan(r.tp, r.micro_batch);
    ASSERT_FALSE(has_errors(validate(p))) << join_messages(validate(p));
    const auto e = estimate(p);
    ASSERT_TRUE(e.ok()) << e.error_text();
    const MemoryBreakdown& m = e->memory.peak;
    const double states_gib = (m.weights_bytes + m.gradients_bytes + m.optimizer_bytes) / kGiB;
    EXPECT_NEAR(states_gib, r.real_model_gib, kPrintedHalfUnitGiB + 0.01 * r.real_model_gib)
        << "tp " << r.tp << " micro-batch " << r.micro_batch;
  }
}

// "Real" = "Real Model" + "Real act." in every row: the tensors of the run, which is our memory
// without the framework reserve (CUDA context and fragmentation are not in it). The README's
// "Allocated/GB" column is not used: it does not say what it counts, and it is below "Real" in the
// tp 2, micro-batch 2 row (7.96 < 8). Tolerance: half a printed unit plus 5%, the total-memory
// accuracy the probe validation reaches (README, "The probe").
// Ours: +2.3% (tp 1, mb 1), +2.8% (tp 1, mb 2), +3.2% (tp 2, mb 1), +4.7% (tp 2, mb 2).
TEST(MoeMemoryPublished, RealMemoryMatchesTheMeasurement) {
  for (const Row& r : kRows) {
    const auto e = estimate(measured_plan(r.tp, r.micro_batch));
    ASSERT_TRUE(e.ok()) << e.error_text();
    const MemoryBreakdown& m = e->memory.peak;
    const double real_gib = (m.total_bytes() - m.reserve_bytes) / kGiB;
    EXPECT_NEAR(real_gib, r.real_gib, kPrintedHalfUnitGiB + 0.05 * r.real_gib)
        << "tp " << r.tp << " micro-batch " << r.micro_batch;
  }
}

// "Real act.": a known gap, held in place. Our activations and transient buffers are 9-20% above
// the measured ones (2.72 vs 2.4, 5.45 vs 5.0, 1.57 vs 1.3, 3.13 vs 2.7 GiB): the closed form
// counts every tensor a layer saves for its backward (Korthikanti et al. 2022, Table 2, extended
// to the router and the permuted tokens), while the allocator reuses freed temporaries. The test
// fails if the estimate drops below the measurement or rises more than 25% above it.
TEST(MoeMemoryPublished, ActivationsStayAboveTheMeasurementWithin25Percent) {
  for (const Row& r : kRows) {
    const auto e = estimate(measured_plan(r.tp, r.micro_batch));
    ASSERT_TRUE(e.ok()) << e.error_text();
    const MemoryBreakdown& m = e->memory.peak;
    const double activation_gib = (m.activations_bytes + m.buffers_bytes) / kGiB;
    EXPECT_GT(activation_gib, r.real_activation_gib) << "tp " << r.tp << " micro-batch " << r.micro_batch;
    EXPECT_LT(activation_gib, 1.25 * r.real_activation_gib + kPrintedHalfUnitGiB)
        << "tp " << r.tp << " micro-batch " << r.micro_batch;
  }
}

}  // namespace
}  // namespace plansight::estimator
