// Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", Table 1: model-state memory per GPU in decimal GB with mixed-precision Adam
// (2 + 2 + K bytes per parameter, K = 12), for P_os, P_os+g and P_os+g+p. Some cells are
// truncated rather than rounded, so each is checked at its printed precision either way.
// Lecture figures (ELLIS 2023, NVIDIA DLI) for bytes per parameter are checked here too.
#include <gtest/gtest.h>

#include "../support/published.h"
#include "plansight/estimator/memory.h"

namespace plansight::estimator {
namespace {

TrainingSpec mixed_precision_adam() {
  TrainingSpec t;
  t.precision = Precision::fp16;
  t.grad_precision = Precision::fp16;
  t.master_precision = MasterPrecision::fp32;
  t.optimizer = Optimizer::adam;
  return t;
}

double model_states_gb(double params, std::int64_t zero, std::int64_t dp) {
  const auto b = model_state_bytes(params, state_bytes_per_parameter(mixed_precision_adam()), zero, dp);
  return (b.weights_bytes + b.gradients_bytes + b.optimizer_bytes) / 1e9;
}

TEST(ZeRO2020, TableOneModelStatesPerGpu) {
  const std::int64_t dps[] = {1, 4, 16, 64, 256, 1024};
  const double params[] = {7.5e9, 128e9, 1e12};
  // [dp][model * 3 + stage-1]
  const char* table[6][9] = {
      {"120", "120", "120", "2048", "2048", "2048", "16000", "16000", "16000"},
      {"52.5", "41.3", "30", "896", "704", "512", "7000", "5500", "4000"},
      {"35.6", "21.6", "7.5", "608", "368", "128", "4750", "2875", "1000"},
      {"31.4", "16.6", "1.88", "536", "284", "32", "4187", "2218", "250"},
      {"30.4", "15.4", "0.47", "518", "263", "8", "4046", "2054", "62.5"},
      {"30.1", "15.1", "0.12", "513", "257", "2", "4011", "2013", "15.6"},
  };
  for (int d = 0; d < 6; ++d) {
    for (int m = 0; m < 3; ++m) {
      for (int stage = 1; stage <= 3; ++stage) {
        const double ours = model_states_gb(params[m], stage, dps[d]);
        const char* printed = table[d][m * 3 + stage - 1];
        EXPECT_TRUE(testing::matches_printed(ours, printed))
            << "Psi=" << params[m] << " DP=" << dps[d] << " stage " << stage << ": " << ours << " vs " << printed;
      }
    }
  }
}

TEST(ZeRO2020, BaselineIsSixteenBytesPerParameter) {
  EXPECT_DOUBLE_EQ(model_states_gb(7.5e9, 0, 64), 120.0);
  const auto b = state_bytes_per_parameter(mixed_precision_adam());
  EXPECT_EQ(b.weights + b.gradients + b.optimizer, 16.0);
}

TEST(LectureExamples, MixedPrecisionAdamOneBillionParameters) {
  // 2 + 2 + 12 bytes per parameter: 1e9 parameters need 16e9 bytes = 14.90 GiB.
  EXPECT_TRUE(testing::matches_printed(model_states_gb(1e9, 0, 1) * 1e9 / (1 << 30), "14.90"));
}

TEST(LectureExamples, BytesPerParameterConventions) {
  TrainingSpec fp32;
  fp32.precision = Precision::fp32;
  fp32.grad_precision = Precision::fp32;
  // GPT-3 175B weights in fp32: 175e9 x 4 B = 651.92 GiB.
  EXPECT_TRUE(testing::matches_printed(175e9 * state_bytes_per_parameter(fp32).weights / (1 << 30), "651.92"));
  // T5-3B optimizer states: AdamW 8 B/param -> 24 GB; 8-bit AdamW 2 B/param -> 6 GB; SGD with
  // momentum 4 B/param (fp32 training: no separate master copy).
  EXPECT_DOUBLE_EQ(3e9 * state_bytes_per_parameter(fp32).optimizer / 1e9, 24.0);
  fp32.optimizer = Optimizer::adam8bit;
  EXPECT_DOUBLE_EQ(3e9 * state_bytes_per_parameter(fp32).optimizer / 1e9, 6.0);
  fp32.optimizer = Optimizer::sgd_momentum;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(fp32).optimizer, 4.0);
  // Mixed precision keeping fp32 + fp16 copies of the weights: 6 B/param; fp32 gradients 4 B.
  TrainingSpec mixed = mixed_precision_adam();
  mixed.grad_precision = Precision::fp32;
  const auto b = state_bytes_per_parameter(mixed);
  EXPECT_DOUBLE_EQ(b.weights + 4 /* fp32 master */, 6.0);
  EXPECT_DOUBLE_EQ(b.gradients, 4.0);
  // bf16 weights + fp32 gradients + Adam: the 18 B/param convention.
  mixed.precision = Precision::bf16;
  const auto c = state_bytes_per_parameter(mixed);
  EXPECT_DOUBLE_EQ(c.weights + c.gradients + c.optimizer, 18.0);
}

}  // namespace
}  // namespace plansight::estimator
