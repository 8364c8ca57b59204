// LossScaler: the state machine of loss_scaler.h, in the order PyTorch's _amp_update_scale_
// applies it (skip and back off on a non-finite step; otherwise count, and grow at the interval).
#include "plansight/runtime/cuda/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace plansight::runtime::cuda {
namespace {

std::string number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace

LossScalerSettings LossScalerSettings::disabled() {
  LossScalerSettings s;
  s.enabled = false;
  s.initial_scale = 1.0f;
  return s;
}

Result<bool> validate(const LossScalerSettings& s) {
  std::vector<Diagnostic> errors;
  auto positive_finite = [](float x) { return std::isfinite(x) && x > 0.0f; };
  if (!positive_finite(s.min_scale)) {
    errors.push_back(make_error("loss_scaler.min_scale", "is " + number(s.min_scale) + "; valid: a finite value > 0"));
  }
  if (!positive_finite(s.max_scale) || s.max_scale < s.min_scale) {
    errors.push_back(make_error("loss_scaler.max_scale", "is " + number(s.max_scale) +
                                                             "; valid: a finite value >= min_scale (" +
                                                             number(s.min_scale) + ")"));
  }
  if (!positive_finite(s.initial_scale) || s.initial_scale < s.min_scale || s.initial_scale > s.max_scale) {
    errors.push_back(make_error("loss_scaler.initial_scale", "is " + number(s.initial_scale) + "; valid: " +
                                                                 number(s.min_scale) + " .. " + number(s.max_scale)));
  }
  if (!(s.growth_factor > 1.0f) || !std::isfinite(s.growth_factor)) {
    errors.push_back(make_error("loss_scaler.growth_factor", "is " + number(s.growth_factor) + "; valid: > 1"));
  }
  if (!(s.backoff_factor > 0.0f && s.backoff_factor < 1.0f)) {
    errors.push_back(make_error("loss_scaler.backoff_factor", "is " + number(s.backoff_factor) + "; valid: 0 < x < 1"));
  }
  if (s.growth_interval < 1) {
    errors.push_back(make_error("loss_scaler.growth_interval", "is " + std::to_string(s.growth_interval) +
                                                                   "; valid: >= 1"));
  }
  if (!errors.empty()) return errors;
  return true;
}

LossScaler::LossScaler(const LossScalerSettings& settings)
    : settings_(settings), scale_(settings.enabled ? settings.initial_scale : 1.0f) {}

Result<StepAction> LossScaler::update(bool found_nonfinite) {
  ++steps_;
  if (found_nonfinite) {
    ++skipped_;
    ++skipped_in_a_row_;
    finite_in_a_row_ = 0;
    if (!settings_.enabled) return StepAction::skip;
    const float next = scale_ * settings_.backoff_factor;
    if (next < settings_.min_scale) {
      return make_error("loss_scaler", "gradients were inf or NaN in " + std::to_string(skipped_in_a_row_) +
                                           " steps in a row down to loss scale " + number(scale_) +
                                           "; the next scale " + number(next) + " is below min_scale " +
                                           number(settings_.min_scale) + ": the loss diverged");
    }
    scale_ = next;
    return StepAction::skip;
  }
  skipped_in_a_row_ = 0;
  if (settings_.enabled && ++finite_in_a_row_ >= settings_.growth_interval) {
    scale_ = std::min(scale_ * settings_.growth_factor, settings_.max_scale);
    finite_in_a_row_ = 0;
  } else if (!settings_.enabled) {
    ++finite_in_a_row_;
  }
  return StepAction::apply;
}

}  // namespace plansight::runtime::cuda
