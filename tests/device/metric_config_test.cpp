// The range profiler's counter configuration, built on the host by CUPTI's profiler host API: no
// GPU or driver is needed, so this runs (label `unit`) wherever the CUDA toolkit with CUPTI is
// installed. The tensor-core metrics of tensor_metrics.h produce a config image for GA100 (A100)
// and GH100 (H100); unknown metrics and chips are rejected with errors that name them.
#include <gtest/gtest.h>

#include <algorithm>

#include "plansight/runtime/cuda/metric_config.h"
#include "plansight/runtime/cuda/tensor_metrics.h"

namespace plansight::runtime::cuda {
namespace {

TEST(MetricConfig, KnowsTheDataCentreChips) {
  const auto chips = profiler_chips();
  ASSERT_TRUE(chips.ok()) << chips.error_text();
  for (const char* chip : {"GA100", "GH100"}) {
    EXPECT_NE(std::find(chips->begin(), chips->end(), chip), chips->end()) << chip;
  }
}

class TensorCoreConfig : public ::testing::TestWithParam<const char*> {};

TEST_P(TensorCoreConfig, BuildsAConfigImage) {
  const std::string chip = GetParam();
  const TensorCoreMetrics metrics = tensor_core_metrics(chip);
  ASSERT_FALSE(metrics.active_pct.empty());
  const auto config = build_metric_config(chip, metrics.all());
  ASSERT_TRUE(config.ok()) << config.error_text();
  EXPECT_EQ(config->chip, chip);
  EXPECT_EQ(config->metrics, metrics.all());
  EXPECT_GT(config->config_image.size(), 64u) << "a config image holds the counter programming";
  EXPECT_GE(config->passes, 1u);
  EXPECT_NE(std::count(config->config_image.begin(), config->config_image.end(), std::uint8_t{0}),
            static_cast<std::ptrdiff_t>(config->config_image.size()))
      << "the image is not all zeros";
  const auto descriptions = describe_metrics(chip, metrics.all());
  ASSERT_TRUE(descriptions.ok()) << descriptions.error_text();
  EXPECT_NE((*descriptions)[1].find("tensor"), std::string::npos) << (*descriptions)[1];
}

INSTANTIATE_TEST_SUITE_P(Chips, TensorCoreConfig, ::testing::Values("GA100", "GH100"));

TEST(MetricConfig, TheHmmaMetricsOfTheIssueBuildOnBothChips) {
  for (const char* chip : {"GA100", "GH100"}) {
    const auto config = build_metric_config(
        chip, {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
               "sm__inst_executed_pipe_tensor_op_hmma.sum"});
    EXPECT_TRUE(config.ok()) << chip << ": " << config.error_text();
  }
}

TEST(MetricConfig, UnknownMetricIsRejectedByName) {
  const auto config = build_metric_config(
      "GA100", {"sm__inst_executed_pipe_tensor_op_hmma.sum", "sm__no_such_counter.sum"});
  ASSERT_FALSE(config.ok());
  ASSERT_EQ(config.errors().size(), 1u) << config.error_text();
  EXPECT_EQ(config.errors()[0].field, "profiler.metrics[1]");
  EXPECT_NE(config.error_text().find("\"sm__no_such_counter.sum\" is not a metric of chip GA100"), std::string::npos)
      << config.error_text();
}

TEST(MetricConfig, HopperOnlyMetricIsUnknownOnAmpere) {
  const auto config = build_metric_config("GA100", {"sm__inst_executed_pipe_tensor_op_gmma.sum"});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error_text().find("sm__inst_executed_pipe_tensor_op_gmma.sum"), std::string::npos);
}

TEST(MetricConfig, UnknownChipListsTheKnownOnes) {
  const auto config = build_metric_config("GX999", {"sm__inst_executed_pipe_tensor_op_hmma.sum"});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.errors()[0].field, "profiler.chip");
  EXPECT_NE(config.error_text().find("\"GX999\" is not a chip this CUPTI knows; valid: "), std::string::npos);
  EXPECT_NE(config.error_text().find("GH100"), std::string::npos);
}

TEST(MetricConfig, NoMetricsIsAnError) {
  const auto config = build_metric_config("GH100", {});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.errors()[0].field, "profiler.metrics");
}

}  // namespace
}  // namespace plansight::runtime::cuda
