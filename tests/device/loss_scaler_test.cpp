// LossScaler, the host state machine of dynamic loss scaling: skip and back off on a non-finite
// step, grow after growth_interval finite steps in a row, caps, divergence, settings validation.
// Expected values follow PyTorch's GradScaler update rule (the defaults are its own).
#include <gtest/gtest.h>

#include "plansight/runtime/cuda/loss_scaler.h"

namespace plansight::runtime::cuda {
namespace {

TEST(LossScaler, DefaultsAreGradScalers) {
  const LossScalerSettings s;
  EXPECT_EQ(s.initial_scale, 65536.0f);
  EXPECT_EQ(s.growth_factor, 2.0f);
  EXPECT_EQ(s.backoff_factor, 0.5f);
  EXPECT_EQ(s.growth_interval, 2000);
  const LossScaler scaler;
  EXPECT_EQ(scaler.scale(), 65536.0f);
  EXPECT_EQ(scaler.inverse_scale(), 1.0f / 65536.0f);
}

TEST(LossScaler, NonFiniteStepIsSkippedAndScaleHalves) {
  LossScaler scaler;
  auto action = scaler.update(true);
  ASSERT_TRUE(action.ok()) << action.error_text();
  EXPECT_EQ(*action, StepAction::skip);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_EQ(scaler.skipped_in_a_row(), 1);
}

TEST(LossScaler, GrowsAfterIntervalOfFiniteSteps) {
  LossScalerSettings s;
  s.growth_interval = 3;
  LossScaler scaler(s);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(*scaler.update(false), StepAction::apply);
    EXPECT_EQ(scaler.scale(), 65536.0f) << "no growth before the interval, step " << i;
  }
  ASSERT_EQ(*scaler.update(false), StepAction::apply);
  EXPECT_EQ(scaler.scale(), 131072.0f);
  EXPECT_EQ(scaler.finite_steps_in_a_row(), 0) << "the count restarts after growing";
}

TEST(LossScaler, OverflowResetsTheFiniteCount) {
  LossScalerSettings s;
  s.growth_interval = 3;
  LossScaler scaler(s);
  ASSERT_EQ(*scaler.update(false), StepAction::apply);
  ASSERT_EQ(*scaler.update(false), StepAction::apply);
  ASSERT_EQ(*scaler.update(true), StepAction::skip);  // 65536 -> 32768
  ASSERT_EQ(*scaler.update(false), StepAction::apply);
  ASSERT_EQ(*scaler.update(false), StepAction::apply);
  EXPECT_EQ(scaler.scale(), 32768.0f) << "only 2 finite steps since the overflow";
  ASSERT_EQ(*scaler.update(false), StepAction::apply);
  EXPECT_EQ(scaler.scale(), 65536.0f);
  EXPECT_EQ(scaler.steps(), 6);
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

TEST(LossScaler, GrowthStopsAtMaxScale) {
  LossScalerSettings s;
  s.initial_scale = 8.0f;
  s.max_scale = 12.0f;
  s.growth_interval = 1;
  LossScaler scaler(s);
  ASSERT_TRUE(scaler.update(false).ok());
  EXPECT_EQ(scaler.scale(), 12.0f);
  ASSERT_TRUE(scaler.update(false).ok());
  EXPECT_EQ(scaler.scale(), 12.0f);
}

TEST(LossScaler, DivergenceIsAnErrorNamingTheSkippedSteps) {
  LossScalerSettings s;
  s.initial_scale = 4.0f;
  s.min_scale = 1.0f;
  LossScaler scaler(s);
  ASSERT_EQ(*scaler.update(true), StepAction::skip);  // 4 -> 2
  ASSERT_EQ(*scaler.update(true), StepAction::skip);  // 2 -> 1
  const auto failed = scaler.update(true);            // 1 -> 0.5 < min_scale
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error_text().find("3 steps in a row"), std::string::npos) << failed.error_text();
  EXPECT_NE(failed.error_text().find("diverged"), std::string::npos) << failed.error_text();
  EXPECT_EQ(scaler.scale(), 1.0f) << "the scale stays at the last valid value";
}

TEST(LossScaler, DisabledKeepsScaleOneButStillSkipsNonFiniteSteps) {
  LossScaler scaler(LossScalerSettings::disabled());
  EXPECT_EQ(scaler.scale(), 1.0f);
  EXPECT_EQ(*scaler.update(true), StepAction::skip);
  EXPECT_EQ(scaler.scale(), 1.0f);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(*scaler.update(false), StepAction::apply);
  EXPECT_EQ(scaler.scale(), 1.0f);
}

TEST(LossScaler, ValidateNamesEveryBadField) {
  EXPECT_TRUE(validate(LossScalerSettings{}).ok());
  EXPECT_TRUE(validate(LossScalerSettings::disabled()).ok());
  LossScalerSettings s;
  s.growth_factor = 1.0f;
  s.backoff_factor = 1.5f;
  s.growth_interval = 0;
  s.initial_scale = 1e30f;
  const auto result = validate(s);
  ASSERT_FALSE(result.ok());
  const std::string text = result.error_text();
  for (const char* field : {"loss_scaler.growth_factor", "loss_scaler.backoff_factor", "loss_scaler.growth_interval",
                            "loss_scaler.initial_scale"}) {
    EXPECT_NE(text.find(field), std::string::npos) << field << " in: " << text;
  }
  EXPECT_EQ(result.errors().size(), 4u);
}

}  // namespace
}  // namespace plansight::runtime::cuda
