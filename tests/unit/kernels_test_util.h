// Helpers shared by the kernels' CPU tests: seeded random tensors and a central finite-difference
// check of fp32 gradients. Losses are summed in double and the difference quotient divides by
// the step fp32 actually took, so the numeric side is limited by fp32 rounding of the forward.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace plansight::kernels::test {

inline std::vector<float> random_normal(std::size_t n, std::uint32_t seed, float stddev = 1.0f,
                                        float mean = 0.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::vector<std::int32_t> random_tokens(std::size_t n, int vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(0, vocab - 1);
  std::vector<std::int32_t> v(n);
  for (std::int32_t& x : v) x = dist(rng);
  return v;
}

// Σ_i out[i] * weights[i] in double: a scalar loss whose gradient w.r.t. out is `weights`.
inline double weighted_sum(const std::vector<float>& out, const std::vector<float>& weights) {
  double sum = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) sum += double{out[i]} * double{weights[i]};
  return sum;
}

// d loss / d x[i] by central differences with step h; x[i] is restored afterwards.
inline double central_difference(std::vector<float>& x, std::size_t i, float h,
                                 const std::function<double()>& loss) {
  const float original = x[i];
  x[i] = original + h;
  const double up_step = double{x[i]} - double{original};
  const double up = loss();
  x[i] = original - h;
  const double down_step = double{original} - double{x[i]};
  const double down = loss();
  x[i] = original;
  return (up - down) / (up_step + down_step);
}

inline std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> v(n);
  std::iota(v.begin(), v.end(), std::size_t{0});
  return v;
}

struct GradientTolerance {
  float step = 1e-2f;  // finite-difference step h
  double rtol = 1e-2;  // relative to max(|analytic|, |numeric|)
  double atol = 1e-4;  // absolute floor for entries whose gradient is near zero
};

// Expects |analytic[i] - numeric[i]| <= rtol * max(|analytic|, |numeric|) + atol for each i in
// `indices`, numeric being the central difference of loss() w.r.t. x[i]. Returns the largest
// relative error seen, for tests that print it.
inline double expect_gradient_matches(const std::string& name, std::vector<float>& x,
                                      const std::vector<float>& analytic,
                                      const std::vector<std::size_t>& indices,
                                      const std::function<double()>& loss,
                                      GradientTolerance tol = {}) {
  double worst = 0.0;
  for (std::size_t i : indices) {
    const double numeric = central_difference(x, i, tol.step, loss);
    const double a = analytic[i];
    const double scale = std::max(std::abs(a), std::abs(numeric));
    const double error = std::abs(a - numeric);
    EXPECT_LE(error, tol.rtol * scale + tol.atol)
        << name << "[" << i << "]: analytic " << a << " vs finite difference " << numeric;
    if (scale > 0.0) worst = std::max(worst, error / scale);
  }
  return worst;
}

// Filled with `value`, so that a backward that accumulates can be told from one that overwrites.
inline std::vector<float> filled(std::size_t n, float value) { return std::vector<float>(n, value); }

// grad - offset element-wise: undoes the prefill of `filled` before comparing gradients.
inline std::vector<float> minus(const std::vector<float>& grad, float offset) {
  std::vector<float> v(grad);
  for (float& x : v) x -= offset;
  return v;
}

}  // namespace plansight::kernels::test
