// The element-wise CUDA twins (encoder, LayerNorm, GeLU, residual, softmax + cross-entropy)
// against their CPU references on seeded random inputs, in fp32, bf16 and fp16. For the 16-bit
// types the inputs are rounded to the type first and the CPU twin runs on the rounded values, so
// the comparison measures the kernel (fp32 math, one rounding on store), not the input rounding.
// Tolerances: device_test_util.h. Without a device every test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "device_test_util.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/kernels/kernels.h"

namespace plansight::kernels {
namespace {

using namespace plansight::device_test;

template <class E>
class ElementwiseKernelsTest : public DeviceTest {};
using ElementTypes = ::testing::Types<float, cuda::bfloat16, cuda::float16>;
TYPED_TEST_SUITE(ElementwiseKernelsTest, ElementTypes);

TYPED_TEST(ElementwiseKernelsTest, EncoderForwardAndBackwardMatchCpu) {
  using E = TypeParam;
  const int B = 3, T = 17, C = 40, V = 11;  // few tokens: rows of dwte collide (atomics)
  const auto tokens = random_tokens(std::size_t{1} * B * T, V, 1);
  const auto wte = rounded<E>(random_normal(std::size_t{1} * V * C, 2));
  const auto wpe = rounded<E>(random_normal(std::size_t{1} * T * C, 3));
  const auto dout = rounded<E>(random_normal(std::size_t{1} * B * T * C, 4));
  auto dwte = random_normal(wte.size(), 5);  // non-zero: backward must accumulate (fp32)
  auto dwpe = random_normal(wpe.size(), 6);
  std::vector<float> out(dout.size());
  DeviceBuffer<std::int32_t> d_tokens(tokens);
  DeviceBuffer<E> d_wte(narrow_all<E>(wte)), d_wpe(narrow_all<E>(wpe)), d_dout(narrow_all<E>(dout)),
      d_out(narrow_all<E>(out));
  DeviceBuffer<float> d_dwte(dwte), d_dwpe(dwpe);
  ASSERT_CUDA(d_dwpe.error());
  ASSERT_OK(cuda::encoder_forward(d_out.get(), d_tokens.get(), d_wte.get(), d_wpe.get(), B, T, C, this->stream_));
  ASSERT_OK(cuda::encoder_backward(d_dwte.get(), d_dwpe.get(), d_dout.get(), d_tokens.get(), B, T, C, this->stream_));
  this->sync();
  cpu::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
  cpu::encoder_backward(dwte.data(), dwpe.data(), dout.data(), tokens.data(), B, T, C);
  expect_close("encoder out", widen_all(d_out.to_host()), out, storage_rtol<E>());
  expect_close("encoder dwte", d_dwte.to_host(), dwte);
  expect_close("encoder dwpe", d_dwpe.to_host(), dwpe);
}

TYPED_TEST(ElementwiseKernelsTest, LayerNormForwardAndBackwardMatchCpu) {
  using E = TypeParam;
  const int N = 37, C = 257;  // C not a multiple of 32, N not of the rows per block
  const auto inp = rounded<E>(random_normal(std::size_t{1} * N * C, 11, 2.0f));
  const auto weight = rounded<E>(random_normal(C, 12));
  const auto bias = rounded<E>(random_normal(C, 13));
  const auto dout = rounded<E>(random_normal(inp.size(), 14));
  auto dinp = rounded<E>(random_normal(inp.size(), 15));
  auto dweight = random_normal(C, 16);
  auto dbias = random_normal(C, 17);
  std::vector<float> out(inp.size()), mean(N), rstd(N);
  DeviceBuffer<E> d_inp(narrow_all<E>(inp)), d_weight(narrow_all<E>(weight)), d_bias(narrow_all<E>(bias)),
      d_dout(narrow_all<E>(dout)), d_dinp(narrow_all<E>(dinp)), d_out(narrow_all<E>(out));
  DeviceBuffer<float> d_dweight(dweight), d_dbias(dbias), d_mean(mean), d_rstd(rstd);
  ASSERT_CUDA(d_rstd.error());
  ASSERT_OK(cuda::layernorm_forward(d_out.get(), d_mean.get(), d_rstd.get(), d_inp.get(), d_weight.get(),
                                    d_bias.get(), N, C, this->stream_));
  this->sync();
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(), bias.data(), N, C);
  expect_close("layernorm out", widen_all(d_out.to_host()), out, storage_rtol<E>());
  expect_close("layernorm mean", d_mean.to_host(), mean);
  expect_close("layernorm rstd", d_rstd.to_host(), rstd);
  // Backward from the CPU's saved statistics on both sides, so only the backward is compared.
  DeviceBuffer<float> d_mean_cpu(mean), d_rstd_cpu(rstd);
  ASSERT_OK(cuda::layernorm_backward(d_dinp.get(), d_dweight.get(), d_dbias.get(), d_dout.get(), d_inp.get(),
                                     d_weight.get(), d_mean_cpu.get(), d_rstd_cpu.get(), N, C, this->stream_));
  this->sync();
  cpu::layernorm_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(), weight.data(),
                          mean.data(), rstd.data(), N, C);
  expect_close("layernorm dinp", widen_all(d_dinp.to_host()), dinp, storage_rtol<E>());
  expect_close("layernorm dweight", d_dweight.to_host(), dweight);
  expect_close("layernorm dbias", d_dbias.to_host(), dbias);
}

TYPED_TEST(ElementwiseKernelsTest, GeluForwardAndBackwardMatchCpu) {
  using E = TypeParam;
  const std::size_t n = 10007;
  const auto inp = rounded<E>(random_normal(n, 21, 3.0f));
  const auto dout = rounded<E>(random_normal(n, 22));
  auto dinp = rounded<E>(random_normal(n, 23));
  std::vector<float> out(n);
  DeviceBuffer<E> d_inp(narrow_all<E>(inp)), d_dout(narrow_all<E>(dout)), d_dinp(narrow_all<E>(dinp)),
      d_out(narrow_all<E>(out));
  ASSERT_CUDA(d_out.error());
  ASSERT_OK(cuda::gelu_forward(d_out.get(), d_inp.get(), n, this->stream_));
  ASSERT_OK(cuda::gelu_backward(d_dinp.get(), d_inp.get(), d_dout.get(), n, this->stream_));
  this->sync();
  cpu::gelu_forward(out.data(), inp.data(), n);
  cpu::gelu_backward(dinp.data(), inp.data(), dout.data(), n);
  expect_close("gelu out", widen_all(d_out.to_host()), out, storage_rtol<E>());
  expect_close("gelu dinp", widen_all(d_dinp.to_host()), dinp, storage_rtol<E>());
  // Overwritten (Gradient::overwrite) over NaNs: the CPU's overwrite, none of the NaNs read.
  DeviceBuffer<E> d_written(narrow_all<E>(std::vector<float>(n, std::numeric_limits<float>::quiet_NaN())));
  ASSERT_CUDA(d_written.error());
  ASSERT_OK(cuda::gelu_backward(d_written.get(), d_inp.get(), d_dout.get(), n, this->stream_, Gradient::overwrite));
  this->sync();
  std::vector<float> written(n);
  cpu::gelu_backward(written.data(), inp.data(), dout.data(), n, Gradient::overwrite);
  expect_close("gelu dinp overwritten", widen_all(d_written.to_host()), written, storage_rtol<E>());
}

TYPED_TEST(ElementwiseKernelsTest, ResidualForwardAndBackwardMatchCpu) {
  using E = TypeParam;
  const std::size_t n = 10007;
  const auto a = rounded<E>(random_normal(n, 31)), b = rounded<E>(random_normal(n, 32)),
             dout = rounded<E>(random_normal(n, 33));
  auto da = rounded<E>(random_normal(n, 34)), db = rounded<E>(random_normal(n, 35));
  std::vector<float> out(n);
  DeviceBuffer<E> d_a(narrow_all<E>(a)), d_b(narrow_all<E>(b)), d_dout(narrow_all<E>(dout)),
      d_da(narrow_all<E>(da)), d_db(narrow_all<E>(db)), d_out(narrow_all<E>(out));
  ASSERT_CUDA(d_out.error());
  ASSERT_OK(cuda::residual_forward(d_out.get(), d_a.get(), d_b.get(), n, this->stream_));
  ASSERT_OK(cuda::residual_backward(d_da.get(), d_db.get(), d_dout.get(), n, this->stream_));
  this->sync();
  cpu::residual_forward(out.data(), a.data(), b.data(), n);
  cpu::residual_backward(da.data(), db.data(), dout.data(), n);
  expect_close("residual out", widen_all(d_out.to_host()), out, storage_rtol<E>());
  expect_close("residual dinp1", widen_all(d_da.to_host()), da, storage_rtol<E>());
  expect_close("residual dinp2", widen_all(d_db.to_host()), db, storage_rtol<E>());
}

// No rows (or no columns) is nothing to do: success, not the launch error of a grid of 0 blocks.
TYPED_TEST(ElementwiseKernelsTest, ZeroRowsAreNothingToDo) {
  using E = TypeParam;
  ASSERT_OK(cuda::layernorm_forward(static_cast<E*>(nullptr), nullptr, nullptr, static_cast<const E*>(nullptr), nullptr,
                                    nullptr, 0, 64, this->stream_));
  ASSERT_OK(cuda::layernorm_backward(static_cast<E*>(nullptr), nullptr, nullptr, static_cast<const E*>(nullptr), nullptr,
                                     nullptr, nullptr, nullptr, 8, 0, this->stream_));
  ASSERT_OK(cuda::softmax_crossentropy_forward(static_cast<float*>(nullptr), static_cast<E*>(nullptr),
                                               static_cast<const E*>(nullptr), nullptr, 0, 1003,
                                               cpu::kDefaultIgnoreIndex, this->stream_));
  this->sync();
}

TYPED_TEST(ElementwiseKernelsTest, SoftmaxCrossEntropyForwardAndBackwardMatchCpu) {
  using E = TypeParam;
  const int N = 9, V = 1003;
  auto logits = random_normal(std::size_t{1} * N * V, 51, 3.0f);
  for (int j = 0; j < V; ++j) logits[static_cast<std::size_t>(V) + j] += 1000.0f;  // needs max-subtraction
  logits = rounded<E>(logits);
  auto targets = random_tokens(N, V, 52);
  targets[4] = cpu::kDefaultIgnoreIndex;
  const auto dlosses = random_normal(N, 53);
  auto dlogits = rounded<E>(random_normal(logits.size(), 54));
  std::vector<float> losses(N), probs(logits.size());
  DeviceBuffer<E> d_logits(narrow_all<E>(logits)), d_dlogits(narrow_all<E>(dlogits)), d_probs(narrow_all<E>(probs));
  DeviceBuffer<float> d_dlosses(dlosses), d_losses(losses);
  DeviceBuffer<std::int32_t> d_targets(targets);
  ASSERT_CUDA(d_probs.error());
  ASSERT_OK(cuda::softmax_crossentropy_forward(d_losses.get(), d_probs.get(), d_logits.get(), d_targets.get(), N, V,
                                               cpu::kDefaultIgnoreIndex, this->stream_));
  this->sync();
  cpu::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V,
                                    cpu::kDefaultIgnoreIndex);
  // One rounding on store after fp32 math: every probability within E's unit roundoff u of the
  // CPU's, however small, plus what the fp32 math may differ by: expf (CUDA: 2 ulp; glibc: 1)
  // and the row sum in another order (at most (V - 1) fp32 roundoffs, Higham 2002, Sec. 4.2).
  const float fp32_math = (V + 3) * 0x1p-24f;
  expect_close_each("softmax probs", widen_all(d_probs.to_host()), probs, unit_roundoff<E>() + fp32_math,
                    subnormal_atol<E>());
  const auto gpu_losses = d_losses.to_host();
  expect_close("crossentropy losses", gpu_losses, losses);
  EXPECT_EQ(gpu_losses[4], 0.0f);
  // Backward from the CPU's probabilities (rounded to E) on both sides.
  probs = rounded<E>(probs);
  DeviceBuffer<E> d_probs_cpu(narrow_all<E>(probs));
  ASSERT_OK(cuda::softmax_crossentropy_backward(d_dlogits.get(), d_dlosses.get(), d_probs_cpu.get(), d_targets.get(),
                                                N, V, cpu::kDefaultIgnoreIndex, this->stream_));
  this->sync();
  cpu::softmax_crossentropy_backward(dlogits.data(), dlosses.data(), probs.data(), targets.data(), N, V,
                                     cpu::kDefaultIgnoreIndex);
  expect_close("softmax dlogits", widen_all(d_dlogits.to_host()), dlogits, storage_rtol<E>());
}

// hold_stream keeps the stream's next work waiting at least the time asked (events around it on
// the same stream), and a hold of 0 launches nothing.
TEST(HoldStreamTest, WorkBehindAHoldWaitsForIt) {
  PLANSIGHT_SKIP_WITHOUT_DEVICE();
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  cudaEvent_t before = nullptr, after = nullptr;
  ASSERT_CUDA(cudaEventCreate(&before));
  ASSERT_CUDA(cudaEventCreate(&after));
  for (const std::int64_t hold_ns : {std::int64_t{0}, std::int64_t{300'000}}) {
    SCOPED_TRACE(hold_ns);
    ASSERT_CUDA(cudaEventRecord(before, stream));
    ASSERT_OK(cuda::hold_stream(hold_ns, stream));
    ASSERT_CUDA(cudaEventRecord(after, stream));
    ASSERT_CUDA(cudaEventSynchronize(after));
    float ms = 0;
    ASSERT_CUDA(cudaEventElapsedTime(&ms, before, after));
    if (hold_ns == 0) {
      EXPECT_LT(ms, 0.1f);
    } else {
      EXPECT_GE(ms, 0.3f * 0.99f);  // events resolve about half a microsecond
      EXPECT_LT(ms, 50.0f);
    }
  }
  cudaEventDestroy(before);
  cudaEventDestroy(after);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace plansight::kernels
