// Memory model properties: ZeRO stages shrink exactly the states they partition, pipeline
// stages hold the embedding/head, schedules order their activation peaks, buffers appear only
// when their mechanism is used.
#include <gtest/gtest.h>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

Plan llama7b_on(std::int64_t gpus) {
  Plan p = default_plan();
  p.model = *find_model("llama-2-7b");
  p.cluster = find_system("dgx-h100")->cluster;
  p.cluster.gpus = gpus;
  p.layout = LayoutSpec{};
  p.training.precision = Precision::bf16;
  p.training.grad_precision = Precision::bf16;
  p.training.global_batch = 64;
  p.training.seq_len = 4096;
  p.training.achieved_tflops = 0;
  p.training.attention = AttentionKernel::flash;
  return p;
}

TEST(MemoryModel, ZeroStagesPartitionTheirStates) {
  Plan p = llama7b_on(8);
  const double params = count_parameters(p.model, padded_vocab(p.model.vocab, 1)).total;
  MemoryBreakdown m[4];
  for (int z = 0; z < 4; ++z) {
    p.layout.zero_stage = z;
    m[z] = estimate(p)->memory.peak;
  }
  EXPECT_DOUBLE_EQ(m[0].optimizer_bytes, params * 12);
  EXPECT_DOUBLE_EQ(m[1].optimizer_bytes, params * 12 / 8);
  EXPECT_DOUBLE_EQ(m[1].gradients_bytes, m[0].gradients_bytes);
  EXPECT_DOUBLE_EQ(m[2].gradients_bytes, params * 2 / 8);
  EXPECT_DOUBLE_EQ(m[2].weights_bytes, params * 2);
  EXPECT_DOUBLE_EQ(m[3].weights_bytes, params * 2 / 8);
  EXPECT_GT(m[3].buffers_bytes, 0) << "ZeRO-3 keeps gathered layers";
  EXPECT_LT(m[3].total_bytes(), m[2].total_bytes());
  EXPECT_LT(m[2].total_bytes(), m[1].total_bytes());
  EXPECT_LT(m[1].total_bytes(), m[0].total_bytes());
}

TEST(MemoryModel, StagesSumToTheWholeModel) {
  Plan p = default_plan();  // TP8 x PP8, tied embeddings
  auto e = estimate(p);
  ASSERT_TRUE(e.ok());
  double held = 0;
  for (const auto& s : e->memory.stages) held += s.parameters;
  const auto counts = count_parameters(p.model, e->padded_vocab);
  // Per TP rank: every layer once, the word embedding twice (first stage, and the tied copy on
  // the last), positions and norms replicated.
  const double expected = static_cast<double>(p.model.layers) * counts.layer.per_tp_rank(8) +
                          2 * counts.word_embedding / 8 + counts.position_embedding + counts.final_norm;
  EXPECT_DOUBLE_EQ(held, expected);
  EXPECT_EQ(e->memory.most_loaded_stage, 0) << "1F1B's first stage stores the most activations";
}

TEST(MemoryModel, ScheduleOrdersActivationPeak) {
  Plan p = default_plan();
  p.layout.recompute = Recompute::selective;
  p.layout.sequence_parallel = true;
  auto one_f_one_b = estimate(p)->memory.stages[0].memory.activations_bytes;
  p.layout.schedule = PipelineSchedule::gpipe;
  auto gpipe = estimate(p)->memory.stages[0].memory.activations_bytes;
  p.layout.schedule = PipelineSchedule::interleaved;
  p.layout.vpp = 2;
  auto interleaved = estimate(p)->memory.stages[0].memory.activations_bytes;
  EXPECT_GT(gpipe, 10 * one_f_one_b);
  EXPECT_GT(interleaved, one_f_one_b);
  EXPECT_LT(interleaved, 1.5 * one_f_one_b);
}

TEST(MemoryModel, RecomputationAndFlashShrinkActivations) {
  Plan p = llama7b_on(8);
  p.training.attention = AttentionKernel::standard;
  const double standard = estimate(p)->memory.peak.activations_bytes;
  p.training.attention = AttentionKernel::flash;
  const double flash = estimate(p)->memory.peak.activations_bytes;
  p.layout.recompute = Recompute::full;
  const double full = estimate(p)->memory.peak.activations_bytes;
  EXPECT_LT(flash, standard / 2) << "s = 4096: the stored scores outweigh the rest of the layer";
  EXPECT_LT(full, flash);
}

// An in-place loss (llm.c's fused classifier, the probe's head) keeps no fp32 softmax beside the
// logits: the head's stage stores 4 V/t bytes a token less per micro-batch awaiting its backward
// (1 with 1F1B), and its backward makes no separate logits' gradient (up to e V/t a token less);
// every other stage is unchanged. Llama-2 7B, PP 4 x TP 2, 4096 tokens a micro-batch, V = 32000.
TEST(MemoryModel, AnInPlaceLossKeepsNoSoftmaxBesideTheLogits) {
  Plan p = llama7b_on(8);
  p.layout.pp = 4;
  p.layout.tp = 2;
  auto megatron = estimate(p);
  p.training.loss_in_place = true;
  auto in_place = estimate(p);
  ASSERT_TRUE(megatron.ok() && in_place.ok());
  const double tokens = 4096, v = static_cast<double>(megatron->padded_vocab), t = 2, e = 2;
  ASSERT_EQ(v, 32000);
  const auto& a = megatron->memory.stages;
  const auto& b = in_place->memory.stages;
  ASSERT_EQ(a.size(), 4u);
  for (std::size_t s = 0; s + 1 < a.size(); ++s) EXPECT_EQ(a[s].memory.activations_bytes, b[s].memory.activations_bytes) << s;
  const double saved = a.back().memory.activations_bytes - b.back().memory.activations_bytes;
  EXPECT_GE(saved, tokens * 4 * v / t);
  EXPECT_LE(saved, tokens * (4 + e) * v / t);
}

TEST(MemoryModel, ContextParallelSplitsTheSequence) {
  Plan p = llama7b_on(8);
  const double cp1 = layer_activation_bytes(p);
  p.layout.cp = 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(p), cp1 / 2) << "flash attention: every term is per token";
}

TEST(MemoryModel, FitsAgainstCapacity) {
  Plan p = llama7b_on(1);
  p.training.global_batch = 1;
  auto e = estimate(p);
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->memory.fits) << "7B with Adam needs >100 GiB on one GPU";
  bool warned = false;
  for (const auto& w : e->warnings) warned = warned || (w.field == "memory" && w.message.find("does not fit") != std::string::npos);
  EXPECT_TRUE(warned);
  p.layout.zero_stage = 3;
  p.cluster.gpus = 8;
  p.training.global_batch = 8;
  EXPECT_TRUE(estimate(p)->memory.fits);
}

TEST(MemoryModel, ReserveIsFixedPlusFragmentation) {
  Plan p = llama7b_on(8);
  p.training.reserve_fixed_bytes = 0;
  p.training.fragmentation = 0;
  auto m = estimate(p)->memory.peak;
  EXPECT_EQ(m.reserve_bytes, 0);
  p.training.reserve_fixed_bytes = 1 << 30;
  p.training.fragmentation = 0.1;
  auto n = estimate(p)->memory.peak;
  EXPECT_DOUBLE_EQ(n.reserve_bytes, (1 << 30) + 0.1 * m.total_bytes());
}

}  // namespace
}  // namespace plansight::estimator
