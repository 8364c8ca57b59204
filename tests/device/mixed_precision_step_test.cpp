// One fp16 training step of a linear layer with dynamic loss scaling, device kernels and the host
// LossScaler together, as a GPU probe step runs them: the scaled fp16 output gradient flows into
// an fp32 weight gradient, check-and-unscale raises the flag or not, the scaler decides, AdamW
// updates the fp32 master and writes the fp16 copy. A finite step matches the CPU AdamW on the
// CPU gradient; an overflowing step (a scaled gradient beyond fp16's 65504) leaves every weight
// bit unchanged and halves the scale. Without a device every test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "device_test_util.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/kernels/kernels.h"
#include "plansight/runtime/cuda/loss_scaler.h"

namespace plansight::runtime::cuda {
namespace {

namespace kc = plansight::kernels::cuda;
using namespace plansight::device_test;

class MixedPrecisionStepTest : public DeviceTest {
 protected:
  static constexpr int N = 32, C = 48, OC = 40;

  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK(kc::Blas::create(blas_));
    x_ = rounded<kc::float16>(random_normal(std::size_t{N} * C, 1));
    master_ = random_normal(std::size_t{OC} * C, 2, 0.1f);
  }

  // One step from `dout` (the loss gradient, before scaling). Returns what the scaler decided.
  Result<StepAction> step(const std::vector<float>& dout, LossScaler& scaler, DeviceBuffer<float>& d_master,
                          DeviceBuffer<kc::float16>& d_weight, DeviceBuffer<float>& d_m, DeviceBuffer<float>& d_v,
                          int adam_step) {
    std::vector<float> scaled(dout);
    for (float& g : scaled) g *= scaler.scale();
    DeviceBuffer<kc::float16> d_dout(narrow_all<kc::float16>(scaled)), d_x(narrow_all<kc::float16>(x_));
    DeviceBuffer<float> d_grad(std::vector<float>(master_.size(), 0.0f));
    DeviceBuffer<int> d_flag(std::vector<int>{0});
    const std::size_t n = master_.size();
    auto check = [](const kc::Status& s) { return s.ok() ? std::string() : s.message(); };
    std::string error = check(kc::matmul_backward(static_cast<kc::float16*>(nullptr), d_grad.get(), nullptr,
                                                  d_dout.get(), d_x.get(), d_weight.get(), N, C, OC, *blas_, stream_));
    if (error.empty()) error = check(kc::unscale_and_check_finite(d_grad.get(), n, scaler.inverse_scale(), d_flag.get(), stream_));
    if (!error.empty()) return make_error("step", error);
    if (cudaStreamSynchronize(stream_) != cudaSuccess) return make_error("step", "cudaStreamSynchronize");
    auto action = scaler.update(d_flag.to_host()[0] != 0);
    if (!action || *action == StepAction::skip) return action;
    error = check(kc::adamw_update(d_master.get(), d_weight.get(), d_m.get(), d_v.get(), d_grad.get(), n, settings_,
                                   adam_step, 1.0f, stream_));
    if (!error.empty()) return make_error("step", error);
    if (cudaStreamSynchronize(stream_) != cudaSuccess) return make_error("step", "cudaStreamSynchronize");
    return action;
  }

  std::unique_ptr<kc::Blas> blas_;
  std::vector<float> x_, master_;
  const kernels::AdamWSettings settings_{1e-2f, 0.9f, 0.999f, 1e-8f, 0.0f};
};

TEST_F(MixedPrecisionStepTest, FiniteStepMatchesCpuAdamWOnTheUnscaledGradient) {
  LossScaler scaler;  // 65536: the scaled gradients stay below fp16's 65504 for |dout| <~ 0.5
  const auto dout = rounded<kc::float16>(random_normal(std::size_t{N} * OC, 3, 0.002f));
  DeviceBuffer<float> d_master(master_), d_m(std::vector<float>(master_.size(), 0.0f)),
      d_v(std::vector<float>(master_.size(), 0.0f));
  DeviceBuffer<kc::float16> d_weight(narrow_all<kc::float16>(master_));
  ASSERT_CUDA(d_weight.error());
  const auto action = step(dout, scaler, d_master, d_weight, d_m, d_v, 1);
  ASSERT_TRUE(action.ok()) << action.error_text();
  ASSERT_EQ(*action, StepAction::apply);
  // CPU: the gradient of the scaled fp16 dout, unscaled, then AdamW on the master copy.
  std::vector<float> scaled(dout);
  for (float& g : scaled) g *= 65536.0f;
  scaled = rounded<kc::float16>(scaled);
  std::vector<float> grad(master_.size(), 0.0f);
  kernels::cpu::matmul_backward(nullptr, grad.data(), nullptr, scaled.data(), x_.data(), master_.data(), N, C, OC);
  for (float& g : grad) g /= 65536.0f;
  std::vector<float> master(master_), m(master_.size(), 0.0f), v(master_.size(), 0.0f);
  kernels::cpu::adamw_update(master.data(), m.data(), v.data(), grad.data(), master.size(), settings_, 1);
  const auto gpu_master = d_master.to_host();
  expect_close("master weights", gpu_master, master, 1e-4f);
  EXPECT_EQ(widen_all(d_weight.to_host()), rounded<kc::float16>(gpu_master));
  EXPECT_EQ(scaler.scale(), 65536.0f);
}

TEST_F(MixedPrecisionStepTest, OverflowSkipsTheStepAndHalvesTheScale) {
  LossScaler scaler;
  auto dout = rounded<kc::float16>(random_normal(std::size_t{N} * OC, 4, 0.002f));
  dout[17] = 2.0f;  // 2 * 65536 overflows fp16: the scaled gradient holds an inf
  DeviceBuffer<float> d_master(master_), d_m(std::vector<float>(master_.size(), 0.0f)),
      d_v(std::vector<float>(master_.size(), 0.0f));
  const auto weights_before = narrow_all<kc::float16>(master_);
  DeviceBuffer<kc::float16> d_weight(weights_before);
  ASSERT_CUDA(d_weight.error());
  const auto action = step(dout, scaler, d_master, d_weight, d_m, d_v, 1);
  ASSERT_TRUE(action.ok()) << action.error_text();
  EXPECT_EQ(*action, StepAction::skip);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  EXPECT_EQ(d_master.to_host(), master_) << "a skipped step leaves the master weights untouched";
  EXPECT_EQ(widen_all(d_weight.to_host()), widen_all(weights_before));
  // At the halved scale the same gradient (2 * 32768 = 65536) still overflows: skipped again.
  const auto again = step(dout, scaler, d_master, d_weight, d_m, d_v, 1);
  ASSERT_TRUE(again.ok()) << again.error_text();
  EXPECT_EQ(*again, StepAction::skip);
  EXPECT_EQ(scaler.scale(), 16384.0f);
  // 2 * 16384 = 32768 fits: the step is applied.
  const auto applied = step(dout, scaler, d_master, d_weight, d_m, d_v, 1);
  ASSERT_TRUE(applied.ok()) << applied.error_text();
  EXPECT_EQ(*applied, StepAction::apply);
  EXPECT_NE(d_master.to_host(), master_);
}

}  // namespace
}  // namespace plansight::runtime::cuda
