// Dynamic loss scaling, the host half (Micikevicius et al. 2018, "Mixed Precision Training",
// §3.2): the loss gradient is multiplied by `scale()` so that small fp16 gradients do not flush
// to zero; after the backward the device check-and-unscale kernel reports whether any gradient
// is inf/NaN. Then update() decides: a non-finite step is skipped and the scale is cut by
// `backoff_factor`; after `growth_interval` finite steps in a row the scale grows by
// `growth_factor`. Defaults are PyTorch's torch.amp.GradScaler's (init_scale 2^16, growth 2,
// backoff 0.5, interval 2000). Plain C++, no CUDA: the same logic serves any device.
#pragma once

#include <cstdint>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

struct LossScalerSettings {
  bool enabled = true;             // false: scale 1, non-finite steps are still skipped
  float initial_scale = 65536.0f;  // 2^16
  float growth_factor = 2.0f;
  float backoff_factor = 0.5f;
  int growth_interval = 2000;      // finite steps in a row before the scale grows
  // Bounds. Below min_scale the gradients are non-finite even at a tiny scale: the loss has
  // diverged and update() reports it. max_scale keeps loss * scale finite in fp32.
  float min_scale = 1.0f / 65536.0f;
  float max_scale = 16777216.0f;  // 2^24

  // Without a scale (bf16 and fp32 have fp32's exponent range; Kalamkar et al. 2019, "A Study
  // of BFLOAT16 for Deep Learning Training", train bf16 without loss scaling).
  static LossScalerSettings disabled();
};

// Every value checked: names the field and what would be valid.
Result<bool> validate(const LossScalerSettings& settings);

enum class StepAction : std::uint8_t { apply, skip };

class LossScaler {
 public:
  explicit LossScaler(const LossScalerSettings& settings = {});

  float scale() const { return scale_; }                // multiplies the loss gradient
  float inverse_scale() const { return 1.0f / scale_; }  // multiplies the gradients back
  const LossScalerSettings& settings() const { return settings_; }

  // After a backward: whether its optimizer step is applied, and the next scale. An error when
  // the scale would fall below min_scale (the run diverged; the message says after how many
  // steps in a row were skipped).
  Result<StepAction> update(bool found_nonfinite);

  std::int64_t steps() const { return steps_; }
  std::int64_t skipped_steps() const { return skipped_; }
  int finite_steps_in_a_row() const { return finite_in_a_row_; }
  int skipped_in_a_row() const { return skipped_in_a_row_; }

 private:
  LossScalerSettings settings_;
  float scale_;
  std::int64_t steps_ = 0;
  std::int64_t skipped_ = 0;
  int finite_in_a_row_ = 0;
  int skipped_in_a_row_ = 0;
};

}  // namespace plansight::runtime::cuda
