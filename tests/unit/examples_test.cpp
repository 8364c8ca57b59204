// The teaching examples (assets/examples/examples.json): every example loads, every row's plan is
// valid, and our value lies within the row's stated tolerance of the published value, except the
// rows listed in kOutsideAbove, whose examples say that ours is far off and why; those must stay
// outside, on the side the example states, until the explanation is rewritten. The published
// values are restated here with their sources, so that an edit of the asset that changes a
// published number fails this test instead of silently moving the goalposts.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/examples.h"
#include "plansight/estimator/placement.h"

namespace plansight::estimator {
namespace {

// (example, row label) -> published value.
const std::map<std::pair<std::string, std::string>, double> kPublished = {
    // ELLIS 2023 lecture / NVIDIA DLI: 16e9 B for a 1e9-parameter model = 14.90 GiB.
    {{"adam-bytes-per-parameter", "model states of a 1e9-parameter model"}, 14.90},
    // ELLIS 2023 lecture: 175e9 x 4 B = 651.92 GiB.
    {{"gpt3-175b-fp32-weights", "weights"}, 651.92},
    // ELLIS 2023 lecture, days = 8TP/(nX), T = 300e9, n = 480.
    {{"training-days-480-a100", "GPT-3 2.7B at 127 TFLOP/s"}, 1.2},
    {{"training-days-480-a100", "GPT-3 6.7B at 130 TFLOP/s"}, 3.0},
    {{"training-days-480-a100", "GPT-3 13B at 135 TFLOP/s"}, 5.6},
    {{"training-days-480-a100", "GPT-3 175B at 140 TFLOP/s"}, 72.3},
    // Narayanan et al. 2021, Sec. 5.1: about 34 days.
    {{"gpt3-175b-34-days", "days at 140 TFLOP/s"}, 34},
    {{"gpt3-175b-34-days", "days at the predicted throughput"}, 34},
    // ELLIS 2023 lecture's rule at n = 8 and 32 with its inputs for GPT-3 2.7B:
    // 8 x 300e9 x 2.7e9 / (n x 127e12) / 86400 / 7 = 10.55 and 2.64 weeks.
    {{"weeks-one-vs-four-dgx-a100", "one DGX A100 (8 GPUs) at 127 TFLOP/s"}, 10.55},
    {{"weeks-one-vs-four-dgx-a100", "four DGX A100 (32 GPUs) at 127 TFLOP/s"}, 2.64},
    {{"weeks-one-vs-four-dgx-a100", "one DGX A100 (8 GPUs), predicted"}, 10.55},
    {{"weeks-one-vs-four-dgx-a100", "four DGX A100 (32 GPUs), predicted"}, 2.64},
    // Narayanan et al. 2021, Sec. 2.2: (p - 1) / m, (p - 1) / (v m), p = 4.
    {{"pipeline-bubble", "1F1B, m = 4"}, 0.75},
    {{"pipeline-bubble", "1F1B, m = 8"}, 0.375},
    {{"pipeline-bubble", "1F1B, m = 16"}, 0.1875},
    {{"pipeline-bubble", "1F1B, m = 32"}, 0.09375},
    {{"pipeline-bubble", "GPipe, m = 8"}, 0.375},
    {{"pipeline-bubble", "interleaved v = 2, m = 8"}, 0.1875},
    {{"pipeline-bubble", "interleaved v = 2, m = 16"}, 0.09375},
    // Rajbhandari et al. 2020, Table 1, 7.5B at N_d = 64, decimal GB.
    {{"zero-stages-7.5b", "ZeRO-0 (DDP)"}, 120},
    {{"zero-stages-7.5b", "ZeRO-1 (P_os)"}, 31.4},
    {{"zero-stages-7.5b", "ZeRO-2 (P_os+g)"}, 16.6},
    {{"zero-stages-7.5b", "ZeRO-3 (P_os+g+p)"}, 1.88},
    // Korthikanti et al. 2022, Table 5: 530B on 2240 A100s, MFU (the first is this tool's calibration point).
    {{"selective-recomputation-530b", "full recomputation (calibration point)"}, 0.421},
    {{"selective-recomputation-530b", "TP + SP + selective recomputation"}, 0.542},
    // Narayanan et al. 2021, Table 2: GPT-3 175B, batch 1536, TFLOP/s per GPU.
    {{"ptd-p-vs-zero3-175b", "PTD-P (TP 8 x PP 12), 384 GPUs"}, 153},
    {{"ptd-p-vs-zero3-175b", "PTD-P (TP 8 x PP 12), 768 GPUs"}, 149},
    {{"ptd-p-vs-zero3-175b", "PTD-P (TP 8 x PP 12), 1536 GPUs"}, 141},
    {{"ptd-p-vs-zero3-175b", "ZeRO-3, no model parallelism, 384 GPUs"}, 144},
    {{"ptd-p-vs-zero3-175b", "ZeRO-3, no model parallelism, 768 GPUs"}, 88},
    {{"ptd-p-vs-zero3-175b", "ZeRO-3, no model parallelism, 1536 GPUs"}, 44},
    // Narayanan et al. 2021, Table 1: 7.5B, TP 4, 128 GPUs, 142 TFLOP/s. The other two are not
    // measurements: 142 TFLOP/s of compute plus Sec. 3.2's TP bytes (with the recomputed
    // forward's) at 50 and 12.5 GB/s, derived in the example's explanation.
    {{"tensor-parallel-across-nodes-leonardo", "TP 4 inside a node (measured on DGX A100)"}, 142},
    {{"tensor-parallel-across-nodes-leonardo", "TP 8 across two nodes (first principles)"}, 67.7},
    {{"tensor-parallel-across-nodes-leonardo", "TP 4 across four nodes (first principles)"}, 49.3},
    // Korthikanti et al. 2022, Table 5: iteration time (s), full recompute vs present work.
    {{"recomputation-22b-to-1t", "22B, full recomputation"}, 1.42},
    {{"recomputation-22b-to-1t", "22B, sequence parallel + selective"}, 1.10},
    {{"recomputation-22b-to-1t", "175B, full recomputation"}, 18.13},
    {{"recomputation-22b-to-1t", "175B, sequence parallel + selective"}, 13.75},
    {{"recomputation-22b-to-1t", "530B, full recomputation"}, 49.05},
    {{"recomputation-22b-to-1t", "530B, sequence parallel + selective"}, 37.83},
    {{"recomputation-22b-to-1t", "1T, full recomputation"}, 94.42},
    {{"recomputation-22b-to-1t", "1T, sequence parallel + selective"}, 71.49},
    // Raschka, LLMs-from-scratch, ch05/10_llm-training-speed/README.md, step 9: tokens/s on one A100.
    {{"vocab-padding-gpt2", "50,257 tokens (unpadded)"}, 112046},
    {{"vocab-padding-gpt2", "50,304 tokens (padded to a multiple of 64)"}, 127345},
};

// Rows whose example states that our value lies above the published one by more than the
// tolerance (the example's explanation says why). Each must stay outside and above.
const std::set<std::pair<std::string, std::string>> kOutsideAbove = {
    // The time model hides ZeRO-3's gathers behind compute; DeepSpeed's measured 144/88/44.
    {"ptd-p-vs-zero3-175b", "ZeRO-3, no model parallelism, 384 GPUs"},
    {"ptd-p-vs-zero3-175b", "ZeRO-3, no model parallelism, 768 GPUs"},
    {"ptd-p-vs-zero3-175b", "ZeRO-3, no model parallelism, 1536 GPUs"},
    // A 124M model on one GPU: the time model underestimates its step.
    {"vocab-padding-gpt2", "50,257 tokens (unpadded)"},
    {"vocab-padding-gpt2", "50,304 tokens (padded to a multiple of 64)"},
};

// Our value of one row of a named example.
double ours(const std::string& name, std::size_t row, std::string_view metric) {
  auto example = find_example(name);
  EXPECT_TRUE(example.ok()) << example.error_text();
  if (!example.ok()) return 0;
  auto plan = example_plan(*example, row);
  EXPECT_TRUE(plan.ok()) << plan.error_text();
  if (!plan.ok()) return 0;
  auto e = estimate(*plan);
  EXPECT_TRUE(e.ok()) << e.error_text();
  if (!e.ok()) return 0;
  auto value = plan_metric(metric, *plan, *e);
  EXPECT_TRUE(value.ok()) << value.error_text();
  return value.ok() ? *value : 0;
}

TEST(Examples, LoadWithoutErrors) {
  for (const auto& e : example_load_errors()) ADD_FAILURE() << e.to_string();
  EXPECT_EQ(examples().size(), 12u);
}

TEST(Examples, EveryRowIsWithinItsToleranceOfThePublishedValue) {
  std::size_t rows = 0, outside = 0;
  for (const auto& example : examples()) {
    auto results = evaluate(example);
    ASSERT_TRUE(results.ok()) << example.name << ": " << results.error_text();
    for (const auto& r : *results) {
      ++rows;
      auto published = kPublished.find({example.name, r.label});
      ASSERT_NE(published, kPublished.end()) << example.name << " / " << r.label << " has no restated value here";
      EXPECT_EQ(r.published, published->second) << example.name << " / " << r.label;
      // The loosest, 15 %, is the attention term 8TP omits for a 2.7B model (the example says so).
      EXPECT_LE(r.tolerance, 0.15) << "no example may hide behind a loose tolerance";
      if (kOutsideAbove.contains({example.name, r.label})) {
        ++outside;
        EXPECT_FALSE(r.within_tolerance()) << example.name << " / " << r.label << ": ours " << r.ours << " " << r.unit
                                           << " is now within " << 100 * r.tolerance << " % of " << r.published
                                           << "; rewrite the example's explanation and drop the row from kOutsideAbove";
        EXPECT_GT(r.ours, r.published) << example.name << " / " << r.label << ": the example says ours is above";
        continue;
      }
      EXPECT_TRUE(r.within_tolerance()) << example.name << " / " << r.label << ": ours " << r.ours << " " << r.unit
                                        << " vs published " << r.published << " (" << 100 * r.relative_error()
                                        << " %, tolerance " << 100 * r.tolerance << " %)";
    }
  }
  EXPECT_EQ(rows, kPublished.size()) << "every restated value belongs to a row";
  EXPECT_EQ(outside, kOutsideAbove.size()) << "every row listed as outside belongs to a row";
}

// What the newer examples' explanations claim, beyond each row's number.
TEST(Examples, PtdPKeepsTensorParallelismInANodeAndZero3ShardsTheModelStates) {
  auto example = find_example("ptd-p-vs-zero3-175b");
  ASSERT_TRUE(example.ok()) << example.error_text();
  for (std::size_t r = 0; r < example->rows.size(); ++r) {
    auto plan = example_plan(*example, r);
    ASSERT_TRUE(plan.ok()) << plan.error_text();
    const bool zero3 = r >= 3;
    EXPECT_EQ(plan->layout.zero_stage, zero3 ? 3 : 0) << r;
    EXPECT_EQ(plan->training.global_batch, 1536) << "Table 2 keeps the batch";
    if (zero3) {
      EXPECT_EQ(plan->training.micro_batch * plan->dp(), 1536) << "ZeRO-3: the whole batch in one step";
    } else {
      EXPECT_EQ(plan->training.micro_batch, 1) << "PTD-P: micro-batch 1";
      for (const auto& link : group_links(*plan)) {
        if (link.group == Group::tp) {
          EXPECT_FALSE(link.crosses_nodes) << "PTD-P's TP 8 stays in a DGX node";
        }
      }
    }
  }
  // PTD-P holds 1/96 of the model states; ZeRO-3 on 1536 GPUs 1/1536 of them.
  EXPECT_LT(ours("ptd-p-vs-zero3-175b", 5, "model_states_gb"), ours("ptd-p-vs-zero3-175b", 2, "model_states_gb") / 10);
}

TEST(Examples, TensorParallelismAcrossNodesIsSlowerTheMoreItCrossesTheNetwork) {
  auto example = find_example("tensor-parallel-across-nodes-leonardo");
  ASSERT_TRUE(example.ok()) << example.error_text();
  ASSERT_EQ(example->rows.size(), 3u);
  const double nominal_gb_per_s[] = {300, 50, 12.5};  // NVLink; two nodes' 4 NICs; one GPU's share
  for (std::size_t r = 0; r < 3; ++r) {
    auto plan = example_plan(*example, r);
    ASSERT_TRUE(plan.ok()) << plan.error_text();
    EXPECT_EQ(plan->cluster.gpus_per_node, 4) << "a Leonardo Booster node";
    for (const auto& link : group_links(*plan)) {
      if (link.group != Group::tp) continue;
      EXPECT_EQ(link.crosses_nodes, r > 0) << r;
      EXPECT_DOUBLE_EQ(link.bandwidth_bytes_per_s, nominal_gb_per_s[r] * 1e9) << r;
    }
  }
  const double in_node = ours(example->name, 0, "achieved_tflops_per_gpu");
  const double two_nodes = ours(example->name, 1, "achieved_tflops_per_gpu");
  const double four_nodes = ours(example->name, 2, "achieved_tflops_per_gpu");
  EXPECT_GT(in_node, 2 * two_nodes);
  EXPECT_GT(two_nodes, four_nodes);
}

TEST(Examples, FourDgxNodesTrainInAQuarterOfTheWeeksAcrossInfiniBand) {
  auto example = find_example("weeks-one-vs-four-dgx-a100");
  ASSERT_TRUE(example.ok()) << example.error_text();
  ASSERT_EQ(example->rows.size(), 4u);
  auto one = example_plan(*example, 2), four = example_plan(*example, 3);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(one->dp(), 8);
  EXPECT_EQ(four->dp(), 32);
  for (const auto& link : group_links(*four)) {
    if (link.group != Group::dp) continue;
    EXPECT_TRUE(link.crosses_nodes) << "four nodes' DP group reduces over InfiniBand";
  }
  // The week figure is the day figure over seven.
  EXPECT_DOUBLE_EQ(ours(example->name, 2, "training_weeks") * 7, ours(example->name, 2, "training_days"));
  // The gradient all-reduce hides behind the last backward: four nodes take a quarter of the time to within 1 %.
  const double ratio = ours(example->name, 2, "training_weeks") / ours(example->name, 3, "training_weeks");
  EXPECT_NEAR(ratio, 4.0, 0.04);
  EXPECT_LT(ratio, 4.0) << "the all-reduce across nodes is not free";
  // With the lecture's X given, the time follows the FLOPs alone: exactly 4x.
  EXPECT_NEAR(ours(example->name, 0, "training_weeks") / ours(example->name, 1, "training_weeks"), 4.0, 1e-9);
}

TEST(Examples, SelectiveRecomputationIsFasterForEveryModel) {
  auto example = find_example("recomputation-22b-to-1t");
  ASSERT_TRUE(example.ok()) << example.error_text();
  ASSERT_EQ(example->rows.size(), 8u);
  for (std::size_t r = 0; r < 8; r += 2) {
    auto full = example_plan(*example, r), selective = example_plan(*example, r + 1);
    ASSERT_TRUE(full.ok() && selective.ok());
    EXPECT_EQ(full->layout.recompute, Recompute::full) << example->rows[r].label;
    EXPECT_EQ(selective->layout.recompute, Recompute::selective) << example->rows[r + 1].label;
    EXPECT_TRUE(selective->layout.sequence_parallel);
    EXPECT_EQ(full->model.layers, selective->model.layers) << "a pair shares its model";
    EXPECT_EQ(full->dp(), 1) << "Table 5 uses no data parallelism";
    EXPECT_LT(ours(example->name, r + 1, "iteration_s"), ours(example->name, r, "iteration_s")) << example->rows[r].label;
  }
}

TEST(Examples, PaddingTheVocabularyMakesGpt2Faster) {
  auto example = find_example("vocab-padding-gpt2");
  ASSERT_TRUE(example.ok()) << example.error_text();
  auto unpadded = example_plan(*example, 0), padded = example_plan(*example, 1);
  ASSERT_TRUE(unpadded.ok() && padded.ok());
  auto a = estimate(*unpadded), b = estimate(*padded);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->padded_vocab, 50257);
  EXPECT_EQ(b->padded_vocab, 50304);
  // Raschka's book, Sec. 4.6: the untied GPT-2 124M has 163,009,536 parameters.
  EXPECT_DOUBLE_EQ(a->parameters, 163009536.0);
  const double gain = b->time.tokens_per_s / a->time.tokens_per_s;
  EXPECT_GT(gain, 127345.0 / 112046.0) << "the example says ours predicts a larger gain than measured";
}

TEST(Examples, RowPlansOverlayTheExamplePlan) {
  auto zero = find_example("zero-stages-7.5b");
  ASSERT_TRUE(zero.ok()) << zero.error_text();
  for (std::size_t r = 0; r < zero->rows.size(); ++r) {
    auto plan = example_plan(*zero, r);
    ASSERT_TRUE(plan.ok()) << plan.error_text();
    EXPECT_EQ(plan->layout.zero_stage, static_cast<std::int64_t>(r)) << "the row's overlay";
    EXPECT_EQ(plan->cluster.gpus, 64) << "the example's plan";
    EXPECT_EQ(plan->model.name, "narayanan-7.5b");
  }
}

TEST(Examples, UnknownNamesAndMetricsAreNamed) {
  auto missing = find_example("no-such-example");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error_text().find("valid: adam-bytes-per-parameter"), std::string::npos) << missing.error_text();
  auto plan = example_plan(*find_example("gpt3-175b-fp32-weights"), 0);
  ASSERT_TRUE(plan.ok());
  Estimate e;
  auto metric = plan_metric("speed", *plan, e);
  ASSERT_FALSE(metric.ok());
  EXPECT_NE(metric.error_text().find("unknown metric \"speed\"; valid: memory_gib, model_states_gib_per_1e9_parameters"), std::string::npos)
      << metric.error_text();
}

}  // namespace
}  // namespace plansight::estimator
