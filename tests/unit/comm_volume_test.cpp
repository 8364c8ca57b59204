// Communication volume per group (TimeBreakdown::*_bytes), hand-checked: what one GPU of the
// first pipeline stage sends per iteration, as ring collectives send it (nccl-tests' bus bytes).
#include <gtest/gtest.h>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"

namespace plansight::estimator {
namespace {

// A 4-layer, 1024-wide GPT on 16 A100s: tp 2, dp 8, one micro-batch of 1 x 1024 tokens, bf16.
Plan small_plan(std::int64_t zero_stage) {
  Plan p = default_plan();
  p.model.name = "volume-test";
  p.model.layers = 4;
  p.model.hidden = 1024;
  p.model.heads = 16;
  p.model.kv_heads = 16;
  p.model.ffn_hidden = 4096;
  p.model.vocab = 32000;
  p.model.max_seq_len = 1024;
  p.cluster.gpus = 16;
  p.layout.tp = 2;
  p.layout.pp = 1;
  p.layout.vpp = 1;
  p.layout.dp = 8;
  p.layout.zero_stage = zero_stage;
  p.layout.recompute = Recompute::none;
  p.training.micro_batch = 1;
  p.training.global_batch = 8;
  p.training.seq_len = 1024;
  p.training.precision = Precision::bf16;
  p.training.grad_precision = Precision::bf16;
  return p;
}

// The plan's prediction with its timeline kept.
TimePrediction predicted_with_timeline(const Plan& plan) {
  auto e = estimate(plan);
  EXPECT_TRUE(e) << e.error_text();
  if (!e) return {};
  TimeModelOptions options;
  options.keep_timeline = true;
  auto predicted = predict_time(plan, e->padded_vocab, options);
  EXPECT_TRUE(predicted) << predicted.error_text();
  return predicted ? std::move(*predicted) : TimePrediction{};
}

TimeBreakdown breakdown_of(const Plan& plan) {
  auto e = estimate(plan);
  EXPECT_TRUE(e) << e.error_text();
  return e ? e->time.breakdown : TimeBreakdown{};
}

TEST(CommVolume, TensorParallelAllReducesOfALayer) {
  // Megatron's layer (Shoeybi et al. 2019, Fig. 4): two all-reduces of the [s b, h] activation in
  // the forward and two in the backward; ring all-reduce sends 2 (t-1)/t of the buffer. Buffer:
  // 1024 tokens x 1024 x 2 B = 2 MiB; t = 2: 2 MiB sent per all-reduce. 4 layers x 4 = 16, plus
  // the vocabulary-parallel embedding's forward all-reduce: 17 x 2 MiB.
  const TimeBreakdown b = breakdown_of(small_plan(0));
  EXPECT_DOUBLE_EQ(b.tp_bytes, 17.0 * 2 * 1024 * 1024);
  EXPECT_EQ(b.cp_bytes, 0);
  EXPECT_EQ(b.pp_bytes, 0);
  EXPECT_EQ(b.ep_bytes, 0);
}

TEST(CommVolume, ZeroThreeSendsOneAndAHalfTimesDataParallel) {
  // Rajbhandari et al. 2020, Sec. 7.2: data parallelism all-reduces the gradients, 2 Psi; ZeRO-1
  // and -2 reduce-scatter gradients and all-gather parameters, also 2 Psi; ZeRO-3 gathers the
  // parameters for the forward and again for the backward and reduce-scatters gradients, 3 Psi.
  // Psi here: this GPU's 2-byte parameters (after the TP split), each collective sending
  // (n-1)/n of it per pass over n = 8 ranks.
  auto e = estimate(small_plan(0));
  ASSERT_TRUE(e) << e.error_text();
  const double psi = 2.0 * e->memory.stages.at(0).parameters;
  const double dp0 = e->time.breakdown.dp_bytes;
  EXPECT_NEAR(dp0, 2 * 7.0 / 8 * psi, 1e-6 * dp0) << "all-reduce: 2 (n-1)/n x the gradients";
  EXPECT_NEAR(breakdown_of(small_plan(1)).dp_bytes, dp0, 1e-9 * dp0);
  EXPECT_NEAR(breakdown_of(small_plan(2)).dp_bytes, dp0, 1e-9 * dp0);
  EXPECT_NEAR(breakdown_of(small_plan(3)).dp_bytes, 1.5 * dp0, 1e-9 * dp0);
}

TEST(CommVolume, ZeroThreeRepeatsPerMicroBatchAndPipelinesSendEachActivationOnce) {
  Plan p = small_plan(3);
  p.training.global_batch = 32;  // 4 micro-batches: ZeRO-3 gathers and reduce-scatters each time
  const TimeBreakdown four = breakdown_of(p);
  EXPECT_NEAR(four.dp_bytes, 4 * breakdown_of(small_plan(3)).dp_bytes, 1e-9 * four.dp_bytes);

  // pp 2 on 32 GPUs, 4 micro-batches: stage 0 sends each micro-batch's activation once, 1/t of
  // it per TP rank (Narayanan et al. 2021, Sec. 4.1): 4 x 2 MiB / 2.
  Plan piped = small_plan(1);
  piped.cluster.gpus = 32;
  piped.layout.pp = 2;
  piped.training.global_batch = 32;
  EXPECT_DOUBLE_EQ(breakdown_of(piped).pp_bytes, 4 * 1024.0 * 1024);
}

// The predicted timeline draws each group's collectives as their own spans, named with the
// collective, the group's size and its link, carrying the bytes sent: rank 0's spans of a group
// add up to the breakdown's volume when none of it is hidden (TP never is; ZeRO-3 without
// prefetch is not).
TEST(CommVolume, EachGroupsCollectivesAreTheirOwnSpansWithTheirBytes) {
  Plan p = small_plan(3);
  p.training.zero3_prefetch = false;
  p.training.global_batch = 16;  // 2 micro-batches
  const TimePrediction predicted = predicted_with_timeline(p);
  const Timeline& t = predicted.timeline;
  double tp = 0, dp = 0;
  for (const auto& track : t.tracks) {
    if (track.rank != 0 || track.lane != Lane::communication) continue;
    for (const auto& span : track.spans) {
      const std::string& name = t.name_of(span);
      if (name == "TP all-reduce · tp 2 · in a node") tp += span.bytes;
      if (name == "ZeRO-3 gather/reduce-scatter · dp x cp 8 · across nodes") dp += span.bytes;
    }
  }
  EXPECT_NEAR(tp, predicted.breakdown.tp_bytes, 1e-6 * tp);
  EXPECT_NEAR(dp, predicted.breakdown.dp_bytes, 1e-6 * dp);
  EXPECT_GT(dp, 0);
}

// The gradient reductions are named by their collective and group and carry their bytes: under
// ZeRO-0 an all-reduce of all the data-parallel volume; under ZeRO-1 a reduce-scatter of half
// of it (the other half is the optimizer's all-gather).
TEST(CommVolume, GradientReductionSpansNameTheirCollectiveAndCarryTheirBytes) {
  for (std::int64_t zero : {0, 1}) {
    const TimePrediction predicted = predicted_with_timeline(small_plan(zero));
    const std::string name = std::string(zero == 0 ? "DP all-reduce" : "DP reduce-scatter") + " · dp x cp 8 · across nodes";
    double bytes = 0;
    int spans = 0;
    for (const auto& track : predicted.timeline.tracks) {
      if (track.rank != 0) continue;
      for (const auto& span : track.spans) {
        if (predicted.timeline.name_of(span) != name) continue;
        bytes += span.bytes;
        ++spans;
      }
    }
    EXPECT_GT(spans, 1) << name << ": one span per gradient bucket";
    EXPECT_NEAR(bytes, (zero == 0 ? 1.0 : 0.5) * predicted.breakdown.dp_bytes, 1e-6 * bytes) << name;
  }
}

}  // namespace
}  // namespace plansight::estimator
