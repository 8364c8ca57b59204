// The cuBLASLt twins (matmul with its bias and bias+GeLU epilogues, causal attention) against
// their CPU references, in fp32 (strict and TF32), bf16 and fp16. 16-bit inputs are rounded to
// the type before the CPU runs on them (see kernels_cuda_test.cpp). Tolerances: fp32 strict as
// the element-wise kernels (summation order differs from OpenBLAS); TF32 rounds each product's
// inputs to a 10-bit mantissa (NVIDIA A100 whitepaper, "TF32"), so 5e-3; bf16/fp16 results are
// stored rounded, and attention rounds its probabilities and their gradients once more. The
// attention probabilities are compared element by element (a tolerance derived from the score
// magnitudes), not relative to the largest, so that small probabilities are checked too.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "device_test_util.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/kernels/kernels.h"

namespace plansight::kernels {
namespace {

using namespace plansight::device_test;

class GemmTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK(cuda::Blas::create(blas_));
  }
  std::unique_ptr<cuda::Blas> blas_;
};

template <class E>
class TypedGemmTest : public GemmTest {
 protected:
  // Attention forward and backward of [B, T, 3C] inputs with NH heads against the CPU's.
  void attention_matches_cpu(int B, int T, int C, int NH);
};
using ElementTypes = ::testing::Types<float, cuda::bfloat16, cuda::float16>;
TYPED_TEST_SUITE(TypedGemmTest, ElementTypes);

TYPED_TEST(TypedGemmTest, MatmulForwardAndBackwardMatchCpu) {
  using E = TypeParam;
  const int N = 50, C = 72, OC = 36;  // OC not a multiple of 8: general alignment
  const auto inp = rounded<E>(random_normal(std::size_t{1} * N * C, 81));
  const auto weight = rounded<E>(random_normal(std::size_t{1} * OC * C, 82, 0.2f));
  const auto bias = rounded<E>(random_normal(OC, 83));
  const auto dout = rounded<E>(random_normal(std::size_t{1} * N * OC, 84));
  auto dinp = rounded<E>(random_normal(inp.size(), 85));
  auto dweight = random_normal(weight.size(), 86);
  auto dbias = random_normal(OC, 87);
  std::vector<float> out(dout.size());
  DeviceBuffer<E> d_inp(narrow_all<E>(inp)), d_weight(narrow_all<E>(weight)), d_bias(narrow_all<E>(bias)),
      d_dout(narrow_all<E>(dout)), d_dinp(narrow_all<E>(dinp)), d_out(narrow_all<E>(out));
  DeviceBuffer<float> d_dweight(dweight), d_dbias(dbias);
  ASSERT_CUDA(d_dbias.error());
  cuda::Blas& blas = *this->blas_;
  ASSERT_OK(cuda::matmul_forward(d_out.get(), d_inp.get(), d_weight.get(), d_bias.get(), N, C, OC, blas, this->stream_));
  ASSERT_OK(cuda::matmul_backward(d_dinp.get(), d_dweight.get(), d_dbias.get(), d_dout.get(), d_inp.get(),
                                  d_weight.get(), N, C, OC, blas, this->stream_));
  this->sync();
  cpu::matmul_forward(out.data(), inp.data(), weight.data(), bias.data(), N, C, OC);
  cpu::matmul_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(), weight.data(), N, C, OC);
  const float rtol = std::max(2e-5f, storage_rtol<E>());
  expect_close("matmul out", widen_all(d_out.to_host()), out, rtol);
  expect_close("matmul dinp", widen_all(d_dinp.to_host()), dinp, rtol);
  // Products of 16-bit values are exact in fp32, so the fp32 weight gradient differs from the
  // CPU's only by summation order.
  expect_close("matmul dweight", d_dweight.to_host(), dweight, 2e-5f);
  expect_close("matmul dbias", d_dbias.to_host(), dbias, 2e-5f);
}

// No bias, and each gradient alone: the weight gradient without the input gradient (the first
// layer's), the input gradient without the weight gradient (the calibration times them apart).
TEST_F(GemmTest, MatmulWithoutBiasAndEachGradientAlone) {
  const int N = 16, C = 32, OC = 24;
  const auto inp = random_normal(std::size_t{1} * N * C, 91);
  const auto weight = random_normal(std::size_t{1} * OC * C, 92);
  const auto dout = random_normal(std::size_t{1} * N * OC, 93);
  auto dweight = random_normal(weight.size(), 94);
  auto dinp = random_normal(inp.size(), 95);
  std::vector<float> out(dout.size()), scratch(weight.size());
  DeviceBuffer<float> d_inp(inp), d_weight(weight), d_dout(dout), d_dweight(dweight), d_dinp(dinp), d_out(out);
  ASSERT_CUDA(d_out.error());
  ASSERT_OK(cuda::matmul_forward(d_out.get(), d_inp.get(), d_weight.get(), nullptr, N, C, OC, *blas_, stream_));
  ASSERT_OK(cuda::matmul_backward(nullptr, d_dweight.get(), nullptr, d_dout.get(), d_inp.get(), d_weight.get(), N, C,
                                  OC, *blas_, stream_));
  ASSERT_OK(cuda::matmul_backward(d_dinp.get(), nullptr, nullptr, d_dout.get(), nullptr, d_weight.get(), N, C, OC,
                                  *blas_, stream_));
  sync();
  cpu::matmul_forward(out.data(), inp.data(), weight.data(), nullptr, N, C, OC);
  cpu::matmul_backward(nullptr, dweight.data(), nullptr, dout.data(), inp.data(), weight.data(), N, C, OC);
  cpu::matmul_backward(dinp.data(), scratch.data(), nullptr, dout.data(), inp.data(), weight.data(), N, C, OC);
  expect_close("matmul out", d_out.to_host(), out, 2e-5f);
  expect_close("matmul dweight", d_dweight.to_host(), dweight, 2e-5f);
  expect_close("matmul dinp", d_dinp.to_host(), dinp, 2e-5f);
  // The input gradient overwritten (Gradient::overwrite, beta 0) over NaNs: dout·weight alone.
  DeviceBuffer<float> d_written(std::vector<float>(dinp.size(), std::numeric_limits<float>::quiet_NaN()));
  ASSERT_CUDA(d_written.error());
  ASSERT_OK(cuda::matmul_backward(d_written.get(), nullptr, nullptr, d_dout.get(), nullptr, d_weight.get(), N, C, OC,
                                  *blas_, stream_, Gradient::overwrite));
  sync();
  std::vector<float> written(dinp.size());
  cpu::matmul_backward_input(written.data(), dout.data(), weight.data(), N, C, OC, Gradient::overwrite);
  expect_close("matmul dinp overwritten", d_written.to_host(), written, 2e-5f);
}

// A forward matmul without bias: random fp32 inputs on the host and the device, and the CPU's
// result.
struct ForwardCase {
  ForwardCase(int n, int c, int oc, std::uint32_t seed)
      : N(n), C(c), OC(oc), inp(random_normal(std::size_t{1} * n * c, seed)),
        weight(random_normal(std::size_t{1} * oc * c, seed + 1)), out(std::size_t{1} * n * oc), d_inp(inp),
        d_weight(weight) {
    cpu::matmul_forward(out.data(), inp.data(), weight.data(), nullptr, N, C, OC);
  }
  int N, C, OC;
  std::vector<float> inp, weight, out;
  DeviceBuffer<float> d_inp, d_weight;
};

// The heuristic is asked once per GEMM description (algo_cache.h): the same matmul again reuses
// its algorithm and gives the same result; another shape, or the same shape in TF32, is new.
TEST_F(GemmTest, OneHeuristicPerGemmDescription) {
  ForwardCase f(16, 32, 24, 99);
  const std::vector<float> zeros(f.out.size());
  DeviceBuffer<float> d_first(zeros), d_second(zeros);
  ASSERT_CUDA(d_second.error());
  const auto forward = [&](DeviceBuffer<float>& out, int rows) {
    return cuda::matmul_forward(out.get(), f.d_inp.get(), f.d_weight.get(), nullptr, rows, f.C, f.OC, *blas_, stream_);
  };
  ASSERT_EQ(blas_->cached_algorithms(), 0u);
  ASSERT_OK(forward(d_first, f.N));
  ASSERT_OK(forward(d_second, f.N));
  EXPECT_EQ(blas_->cached_algorithms(), 1u);
  ASSERT_OK(forward(d_second, f.N / 2));
  EXPECT_EQ(blas_->cached_algorithms(), 2u);
  blas_->set_fp32_math(cuda::Fp32Math::tf32);
  ASSERT_OK(forward(d_second, f.N));
  EXPECT_EQ(blas_->cached_algorithms(), 3u);
  blas_->set_fp32_math(cuda::Fp32Math::strict);
  ASSERT_OK(forward(d_second, f.N));
  sync();
  EXPECT_EQ(blas_->cached_algorithms(), 3u);
  expect_close("first call", d_first.to_host(), f.out, 2e-5f);
  expect_close("cached call", d_second.to_host(), f.out, 2e-5f);
}

// A cached description (descriptor, layouts and algorithm, algo_cache.h) is reused with each
// call's own bias and GeLU-argument pointers: the same shapes twice with other buffers give each
// call's own result, not the first call's bias, and the second time adds no description.
TEST_F(GemmTest, CachedDescriptionTakesEachCallsBiasAndGeluPointers) {
  const int N = 24, C = 40, OC = 32;
  const auto inp = random_normal(std::size_t{1} * N * C, 111);
  const auto weight = random_normal(std::size_t{1} * OC * C, 112, 0.3f);
  DeviceBuffer<float> d_inp(inp), d_weight(weight);
  ASSERT_CUDA(d_weight.error());
  std::size_t descriptions = 0;
  for (const std::uint32_t seed : {113u, 114u}) {
    SCOPED_TRACE(seed);
    const auto bias = random_normal(OC, seed, 2.0f);
    std::vector<float> pre(std::size_t{1} * N * OC), out(pre.size()), plain(pre.size());
    DeviceBuffer<float> d_bias(bias), d_pre(pre), d_out(out), d_plain(plain);
    ASSERT_CUDA(d_plain.error());
    ASSERT_OK(cuda::matmul_gelu_forward(d_out.get(), d_pre.get(), d_inp.get(), d_weight.get(), d_bias.get(), N, C, OC,
                                        *blas_, stream_));
    ASSERT_OK(cuda::matmul_forward(d_plain.get(), d_inp.get(), d_weight.get(), d_bias.get(), N, C, OC, *blas_, stream_));
    sync();
    cpu::matmul_forward(pre.data(), inp.data(), weight.data(), bias.data(), N, C, OC);
    cpu::gelu_forward(out.data(), pre.data(), pre.size());
    expect_close("bias epilogue", d_plain.to_host(), pre, 2e-5f);
    expect_close("pre_gelu", d_pre.to_host(), pre, 2e-5f);
    expect_close("gelu out", d_out.to_host(), out, 1e-4f);
    if (seed == 113u) descriptions = blas_->cached_algorithms();
  }
  EXPECT_GE(descriptions, 1u);
  EXPECT_EQ(blas_->cached_algorithms(), descriptions);
}

TEST_F(GemmTest, Tf32MatmulStaysWithinTf32Rounding) {
  ForwardCase f(64, 256, 128, 95);
  DeviceBuffer<float> d_out(std::vector<float>(f.out.size()));
  ASSERT_CUDA(d_out.error());
  blas_->set_fp32_math(cuda::Fp32Math::tf32);
  ASSERT_OK(cuda::matmul_forward(d_out.get(), f.d_inp.get(), f.d_weight.get(), nullptr, f.N, f.C, f.OC, *blas_, stream_));
  sync();
  expect_close("tf32 matmul out", d_out.to_host(), f.out, 5e-3f);
}

// Fused bias+GeLU (OC a multiple of 8) and its unfused fallback (OC = 36) give what the CPU's
// matmul then GeLU give; pre_gelu is the matmul output that gelu_backward reads.
TEST_F(GemmTest, MatmulGeluMatchesMatmulThenGelu) {
  for (const int OC : {64, 36}) {
    SCOPED_TRACE(OC);
    const int N = 40, C = 48;
    const auto inp = random_normal(std::size_t{1} * N * C, 101);
    const auto weight = random_normal(std::size_t{1} * OC * C, 102, 0.3f);
    const auto bias = random_normal(OC, 103);
    std::vector<float> pre(std::size_t{1} * N * OC), out(pre.size());
    DeviceBuffer<float> d_inp(inp), d_weight(weight), d_bias(bias), d_pre(pre), d_out(out);
    ASSERT_CUDA(d_out.error());
    ASSERT_OK(cuda::matmul_gelu_forward(d_out.get(), d_pre.get(), d_inp.get(), d_weight.get(), d_bias.get(), N, C, OC,
                                        *blas_, stream_));
    sync();
    cpu::matmul_forward(pre.data(), inp.data(), weight.data(), bias.data(), N, C, OC);
    cpu::gelu_forward(out.data(), pre.data(), pre.size());
    expect_close("pre_gelu", d_pre.to_host(), pre, 2e-5f);
    expect_close("gelu out", d_out.to_host(), out, 1e-4f);
  }
}

// Shapes: hs = 12, heads at unaligned offsets; the GPT-2 head size hs = 64 with T = 70, where
// cuBLASLt picks its tensor-core kernels and each causal-softmax row takes three warp steps (T not
// a multiple of 8: the scalar softmax backward); and T = 64 and 264, multiples of 8, where the
// softmax backward keeps a row in registers as 16-byte packs (kernels/cuda/vec.cuh): one pack
// chunk per lane for T = 64, two (bf16/fp16) or three (fp32) for T = 264, the last partial.
TYPED_TEST(TypedGemmTest, AttentionForwardAndBackwardMatchCpu) {
  struct Shape {
    int B, T, C, NH;
  };
  for (const Shape shape : {Shape{2, 19, 48, 4}, Shape{1, 70, 128, 2}, Shape{2, 64, 48, 4}, Shape{1, 264, 128, 2}}) {
    SCOPED_TRACE("T = " + std::to_string(shape.T) + ", hs = " + std::to_string(shape.C / shape.NH));
    this->attention_matches_cpu(shape.B, shape.T, shape.C, shape.NH);
  }
}

template <class E>
void TypedGemmTest<E>::attention_matches_cpu(int B, int T, int C, int NH) {
  const std::size_t qkv_n = std::size_t{1} * B * T * 3 * C, att_n = std::size_t{1} * B * NH * T * T;
  const auto qkv = rounded<E>(random_normal(qkv_n, 111));
  const auto dout = rounded<E>(random_normal(std::size_t{1} * B * T * C, 112));
  auto dqkv = rounded<E>(random_normal(qkv_n, 113));
  std::vector<float> out(dout.size()), att(att_n), scratch(att_n);
  DeviceBuffer<E> d_qkv(narrow_all<E>(qkv)), d_dout(narrow_all<E>(dout)), d_dqkv(narrow_all<E>(dqkv)),
      d_out(narrow_all<E>(out)), d_att(narrow_all<E>(att)), d_scratch(narrow_all<E>(scratch));
  ASSERT_CUDA(d_scratch.error());
  cuda::Blas& blas = *this->blas_;
  ASSERT_OK(cuda::attention_forward(d_out.get(), d_att.get(), d_qkv.get(), B, T, C, NH, blas, this->stream_));
  this->sync();
  cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  // The probabilities, each on its own. The scores are stored in E before the softmax (relative
  // error u each), so ln p_j = s_j - log sum exp s moves by at most u (|s_j| + max|s|) <= 2 u S,
  // S the largest |score| (computed here from the inputs), and p is stored in E once more (u):
  // rtol = u (1 + 2S), plus 2e-5 for the fp32 GEMM's summation order against OpenBLAS.
  const int hs = C / NH;
  float max_score = 0;
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      for (int t = 0; t < T; ++t) {
        for (int s = 0; s <= t; ++s) {
          float dot = 0;
          for (int i = 0; i < hs; ++i) {
            dot += qkv[(static_cast<std::size_t>(b) * T + t) * 3 * C + h * hs + i] *
                   qkv[(static_cast<std::size_t>(b) * T + s) * 3 * C + C + h * hs + i];
          }
          max_score = std::max(max_score, std::fabs(dot) / std::sqrt(static_cast<float>(hs)));
        }
      }
    }
  }
  const float att_rtol = unit_roundoff<E>() * (1 + 2 * max_score) + 2e-5f;
  const auto gpu_att = widen_all(d_att.to_host());
  expect_close_each("attention att", gpu_att, att, att_rtol, subnormal_atol<E>());
  // The output sums p v with either sign: cancellation, so relative to the largest output.
  expect_close("attention out", widen_all(d_out.to_host()), out, std::max(2e-5f, 2 * storage_rtol<E>()));
  for (int row = 0; row < B * NH * T; ++row) {  // causal: exact zeros above the diagonal
    const int t = row % T;
    for (int s = t + 1; s < T; ++s) ASSERT_EQ(gpu_att[static_cast<std::size_t>(row) * T + s], 0.0f) << row << "," << s;
  }
  // Backward from the CPU's probabilities (rounded to E) on both sides.
  att = rounded<E>(att);
  DeviceBuffer<E> d_att_cpu(narrow_all<E>(att));
  ASSERT_OK(cuda::attention_backward(d_dqkv.get(), d_scratch.get(), d_dout.get(), d_qkv.get(), d_att_cpu.get(), B, T,
                                     C, NH, blas, this->stream_));
  this->sync();
  cpu::attention_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
  expect_close("attention dqkv", widen_all(d_dqkv.to_host()), dqkv, std::max(2e-5f, 3 * storage_rtol<E>()));
}

TEST_F(GemmTest, AttentionRejectsHeadsThatDoNotDivideC) {
  const auto status = cuda::attention_forward(static_cast<float*>(nullptr), nullptr, nullptr, 1, 4, 30, 4, *blas_,
                                              stream_);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("NH = 4 must be positive and divide C = 30"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace plansight::kernels
