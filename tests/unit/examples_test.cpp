// The teaching examples (assets/examples/examples.json): every example loads, every row's plan is
// valid, and our value lies within the row's stated tolerance of the published value. The
// published values are restated here with their sources, so that an edit of the asset that
// changes a published number fails this test instead of silently moving the goalposts.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "plansight/estimator/examples.h"

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
};

TEST(Examples, LoadWithoutErrors) {
  for (const auto& e : example_load_errors()) ADD_FAILURE() << e.to_string();
  EXPECT_EQ(examples().size(), 7u);
}

TEST(Examples, EveryRowIsWithinItsToleranceOfThePublishedValue) {
  std::size_t rows = 0;
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
      EXPECT_TRUE(r.within_tolerance()) << example.name << " / " << r.label << ": ours " << r.ours << " " << r.unit
                                        << " vs published " << r.published << " (" << 100 * r.relative_error()
                                        << " %, tolerance " << 100 * r.tolerance << " %)";
    }
  }
  EXPECT_EQ(rows, kPublished.size()) << "every restated value belongs to a row";
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
