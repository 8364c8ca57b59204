// AdamW (fp32, and fp32 master weights with a bf16/fp16/fp32 compute copy), the loss-scaling
// check-and-unscale, and the type conversions, against the CPU reference or exact values.
// Without a device every test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "device_test_util.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/kernels/kernels.h"

namespace plansight::kernels {
namespace {

using namespace plansight::device_test;

class OptimizerKernelsTest : public DeviceTest {};

TEST_F(OptimizerKernelsTest, AdamWMatchesCpuOverThreeSteps) {
  const std::size_t n = 4099;
  auto params = random_normal(n, 41);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  const AdamWSettings settings{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
  DeviceBuffer<float> d_params(params), d_m(m), d_v(v);
  ASSERT_CUDA(d_v.error());
  for (int step = 1; step <= 3; ++step) {
    const auto grads = random_normal(n, 42 + static_cast<std::uint32_t>(step));
    DeviceBuffer<float> d_grads(grads);
    ASSERT_OK(cuda::adamw_update(d_params.get(), d_m.get(), d_v.get(), d_grads.get(), n, settings, step, stream_));
    sync();
    cpu::adamw_update(params.data(), m.data(), v.data(), grads.data(), n, settings, step);
  }
  expect_close("adamw params", d_params.to_host(), params);
  expect_close("adamw m", d_m.to_host(), m);
  expect_close("adamw v", d_v.to_host(), v);
}

template <class E>
class MasterWeightsTest : public DeviceTest {};
using ElementTypes = ::testing::Types<float, cuda::bfloat16, cuda::float16>;
TYPED_TEST_SUITE(MasterWeightsTest, ElementTypes);

// The master copy follows the CPU AdamW on the unscaled gradients; the compute copy is exactly
// the master rounded to E (one rounding, no drift between the two).
TYPED_TEST(MasterWeightsTest, AdamWUpdatesMasterAndRoundsComputeCopy) {
  using E = TypeParam;
  const std::size_t n = 3001;
  const float loss_scale = 1024.0f;  // a power of two: scaling and unscaling are exact
  auto master = random_normal(n, 61);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  const AdamWSettings settings{3e-3f, 0.9f, 0.999f, 1e-8f, 0.01f};
  DeviceBuffer<float> d_master(master), d_m(m), d_v(v);
  DeviceBuffer<E> d_params(narrow_all<E>(master));
  ASSERT_CUDA(d_params.error());
  for (int step = 1; step <= 2; ++step) {
    const auto grads = random_normal(n, 62 + static_cast<std::uint32_t>(step));
    std::vector<float> scaled(grads);
    for (float& g : scaled) g *= loss_scale;
    DeviceBuffer<float> d_grads(scaled);
    ASSERT_OK(cuda::adamw_update(d_master.get(), d_params.get(), d_m.get(), d_v.get(), d_grads.get(), n, settings,
                                 step, 1.0f / loss_scale, this->stream_));
    this->sync();
    EXPECT_EQ(d_grads.to_host(), scaled) << "the gradients must stay unmodified";
    cpu::adamw_update(master.data(), m.data(), v.data(), grads.data(), n, settings, step);
  }
  const auto gpu_master = d_master.to_host();
  expect_close("master params", gpu_master, master);
  expect_close("adamw m", d_m.to_host(), m);
  expect_close("adamw v", d_v.to_host(), v);
  const auto compute_copy = widen_all(d_params.to_host());
  EXPECT_EQ(compute_copy, rounded<E>(gpu_master));
}

TEST_F(OptimizerKernelsTest, UnscaleDividesExactlyAndFlagsNonFinite) {
  std::vector<float> grads = random_normal(5000, 71);
  const std::vector<float> clean = grads;
  grads[1234] = std::numeric_limits<float>::infinity();
  grads[4321] = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer<float> d_clean(clean), d_grads(grads);
  DeviceBuffer<int> d_flag_clean(std::vector<int>{0}), d_flag(std::vector<int>{0});
  ASSERT_CUDA(d_flag.error());
  const float multiplier = 1.0f / 4096.0f;
  ASSERT_OK(cuda::unscale_and_check_finite(d_clean.get(), clean.size(), multiplier, d_flag_clean.get(), stream_));
  ASSERT_OK(cuda::unscale_and_check_finite(d_grads.get(), grads.size(), multiplier, d_flag.get(), stream_));
  sync();
  EXPECT_EQ(d_flag_clean.to_host()[0], 0);
  EXPECT_EQ(d_flag.to_host()[0], 1);
  const auto unscaled = d_clean.to_host();
  for (std::size_t i = 0; i < clean.size(); ++i) ASSERT_EQ(unscaled[i], clean[i] * multiplier) << i;
}

TEST_F(OptimizerKernelsTest, CheckFiniteSeesOverflowInHalfPrecision) {
  // 70000 overflows fp16 (largest finite value 65504, IEEE 754 binary16) but not bf16.
  std::vector<float> values = random_normal(777, 72);
  values[500] = 70000.0f;
  DeviceBuffer<cuda::float16> d_half(narrow_all<cuda::float16>(values));
  DeviceBuffer<cuda::bfloat16> d_bf16(narrow_all<cuda::bfloat16>(values));
  DeviceBuffer<int> d_half_flag(std::vector<int>{0}), d_bf16_flag(std::vector<int>{0});
  ASSERT_CUDA(d_bf16_flag.error());
  ASSERT_OK(cuda::check_finite(d_half.get(), values.size(), d_half_flag.get(), stream_));
  ASSERT_OK(cuda::check_finite(d_bf16.get(), values.size(), d_bf16_flag.get(), stream_));
  sync();
  EXPECT_EQ(d_half_flag.to_host()[0], 1);
  EXPECT_EQ(d_bf16_flag.to_host()[0], 0);
}

TEST_F(OptimizerKernelsTest, ConversionsRoundToNearestEvenAsTheHost) {
  const auto values = random_normal(2049, 73, 100.0f);
  DeviceBuffer<float> d_values(values), d_back(std::vector<float>(values.size()));
  DeviceBuffer<cuda::bfloat16> d_bf16(std::vector<cuda::bfloat16>(values.size()));
  DeviceBuffer<cuda::float16> d_half(std::vector<cuda::float16>(values.size()));
  ASSERT_CUDA(d_half.error());
  ASSERT_OK(cuda::convert(d_bf16.get(), d_values.get(), values.size(), stream_));
  ASSERT_OK(cuda::convert(d_half.get(), d_values.get(), values.size(), stream_));
  ASSERT_OK(cuda::convert(d_back.get(), d_bf16.get(), values.size(), stream_));
  sync();
  EXPECT_EQ(widen_all(d_bf16.to_host()), rounded<cuda::bfloat16>(values));
  EXPECT_EQ(widen_all(d_half.to_host()), rounded<cuda::float16>(values));
  EXPECT_EQ(d_back.to_host(), rounded<cuda::bfloat16>(values));
}

}  // namespace
}  // namespace plansight::kernels
