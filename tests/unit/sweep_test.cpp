// Sweeps: value lists, field names, and sweeps that agree with the examples' published
// figures (ZeRO stages of a 7.5B model on 64 GPUs, Rajbhandari et al. 2020 Table 1; the pipeline
// bubble falling as (p - 1)/m, Narayanan et al. 2021 Sec. 2.2), an invalid value kept as an error
// point, and the CSV and JSON forms.
#include <gtest/gtest.h>

#include "plansight/estimator/examples.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/sweep.h"

namespace plansight::estimator {
namespace {

TEST(SweepValues, RangesGeometricRangesAndLists) {
  EXPECT_EQ(*parse_sweep_values("1..4"), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(*parse_sweep_values("1..64*2"), (std::vector<double>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(*parse_sweep_values("8,16,3e1"), (std::vector<double>{8, 16, 30}));
  EXPECT_EQ(*parse_sweep_values("5..5"), (std::vector<double>{5}));
  for (const char* bad : {"4..1", "0..8*2", "1..", "a,b", "1..2000", "1..8*1", "1.5..3", "1,,2", ""}) {
    auto v = parse_sweep_values(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.errors().front().field, "values") << bad;
    EXPECT_NE(v.error_text().find("valid: A..B"), std::string::npos) << v.error_text();
  }
}

TEST(SweepFields, AliasesPathsAndErrors) {
  EXPECT_EQ(sweep_field("pp")->path, "layout.pp");
  EXPECT_EQ(sweep_field("zero")->path, "layout.zero_stage");
  EXPECT_EQ(sweep_field("training.seq_len")->path, "training.seq_len");
  for (const char* bad : {"speed", "layout.schedule", "model.name", "layout."}) {
    auto f = sweep_field(bad);
    ASSERT_FALSE(f.ok()) << bad;
    EXPECT_NE(f.error_text().find("is not a numeric plan field; valid: tp, pp"), std::string::npos) << f.error_text();
  }
}

TEST(Sweep, ZeroStagesGiveTheExamplesModelStates) {
  auto example = find_example("zero-stages-7.5b");
  ASSERT_TRUE(example.ok());
  auto plan = example_plan(*example, 0);
  ASSERT_TRUE(plan.ok()) << plan.error_text();
  auto r = sweep(*plan, *sweep_field("zero"), *parse_sweep_values("0..3"), {"model_states_gb", "memory_gib"});
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_EQ(r->points.size(), 4u);
  auto rows = evaluate(*example);
  ASSERT_TRUE(rows.ok());
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(r->points[i].error.empty()) << r->points[i].error;
    EXPECT_DOUBLE_EQ(r->points[i].metrics[0], (*rows)[i].ours) << "ZeRO-" << i << ": a sweep point is the plan file";
    if (i > 0) {
      EXPECT_LT(r->points[i].metrics[1], r->points[i - 1].metrics[1]) << "each stage saves memory";
    }
  }
}

TEST(Sweep, MoreMicroBatchesShrinkTheBubbleAsPMinusOneOverM) {
  auto example = find_example("pipeline-bubble");
  ASSERT_TRUE(example.ok());
  auto plan = example_plan(*example, 0);
  ASSERT_TRUE(plan.ok());
  auto r = sweep(*plan, *sweep_field("micro_batches"), *parse_sweep_values("4..32*2"), {"bubble_fraction"});
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_EQ(r->points.size(), 4u);
  for (const auto& p : r->points) {
    ASSERT_TRUE(p.error.empty()) << p.error;
    EXPECT_NEAR(p.metrics[0] / (3.0 / p.value), 1.0, 0.12) << "m = " << p.value << " (the example's stated tolerance)";
  }
  EXPECT_GT(r->points[0].metrics[0], r->points[3].metrics[0]);
}

TEST(Sweep, AnInvalidValueIsAnErrorPointAndTheRestRun) {
  Plan p = default_plan();  // GPT-3 175B: 96 layers, TP 8 x PP 8 on 1024 GPUs
  auto r = sweep(p, *sweep_field("pp"), {4, 7, 8}, {"memory_gib"});
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_TRUE(r->points[0].error.empty());
  EXPECT_NE(r->points[1].error.find("layout.pp"), std::string::npos) << r->points[1].error;
  EXPECT_TRUE(r->points[1].metrics.empty());
  EXPECT_TRUE(r->points[2].error.empty());
  EXPECT_GT(r->points[0].metrics[0], r->points[2].metrics[0]) << "PP 4 holds twice the layers of PP 8";

  const std::string csv = to_csv(*r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "pp,memory_gib,error");
  EXPECT_NE(csv.find("\n7,,\"layout.pp"), std::string::npos) << csv;
  const auto j = to_json(*r);
  EXPECT_EQ(j["units"]["memory_gib"], "GiB");
  EXPECT_TRUE(j["points"][1].contains("error"));
  EXPECT_FALSE(j["points"][0].contains("error"));

  // A point whose plan has a warning before its error shows the error.
  Plan overlapped = p;
  overlapped.layout.sequence_parallel = true;
  overlapped.layout.tp_overlap = true;
  auto tps = sweep(overlapped, *sweep_field("tp"), {1, 8}, {"memory_gib"});
  ASSERT_TRUE(tps.ok()) << tps.error_text();
  EXPECT_EQ(tps->points[0].error.rfind("layout.tp_overlap: ", 0), 0u) << tps->points[0].error;
  EXPECT_TRUE(tps->points[1].error.empty()) << tps->points[1].error;

  auto bad = sweep(p, *sweep_field("pp"), {8}, {"speed"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error_text().find("unknown metric \"speed\""), std::string::npos);
}

}  // namespace
}  // namespace plansight::estimator
