// The two forms of the memory-bound CUDA twins (kernels/cuda/vec.cuh): 16-byte packs when every
// row length is a multiple of the pack width (8 bf16/fp16, 4 fp32) and every pointer is 16-byte
// aligned, else the scalar form. Each case runs the same inputs through both (pointers one element
// past a 16-byte boundary force the scalar form) and against the CPU twin or an inline host
// reference, at lengths that leave a partial pack chunk, a partial column strip and a row count
// that is not a multiple of the strips' row slices. Tolerances as kernels_cuda_test.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "device_test_util.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/kernels/cuda/vocab_parallel.h"
#include "plansight/kernels/kernels.h"

namespace plansight::kernels {
namespace {

using namespace plansight::device_test;

template <class E>
class VectorKernelsTest : public DeviceTest {};
using ElementTypes = ::testing::Types<float, cuda::bfloat16, cuda::float16>;
TYPED_TEST_SUITE(VectorKernelsTest, ElementTypes);

// v after `offset` leading zeros: a device copy whose data starts offset elements in.
std::vector<float> shifted(const std::vector<float>& v, int offset) {
  std::vector<float> out(static_cast<std::size_t>(offset), 0.0f);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

// The elements of a shifted device copy, without the leading ones.
std::vector<float> unshifted(const std::vector<float>& v, int offset) { return {v.begin() + offset, v.end()}; }

template <class E>
cuda::DType dtype_of() {
  if constexpr (sizeof(E) == 4) {
    return cuda::DType::fp32;
  } else if constexpr (std::is_same_v<E, cuda::bfloat16>) {
    return cuda::DType::bf16;
  } else {
    return cuda::DType::fp16;
  }
}

std::string shape(int N, int C, int offset) {
  return "N = " + std::to_string(N) + ", C = " + std::to_string(C) + ", offset = " + std::to_string(offset);
}

// LayerNorm forward and backward, every operand `offset` elements past a 16-byte boundary.
template <class E>
void layernorm_matches_cpu(cudaStream_t stream, int N, int C, int offset) {
  SCOPED_TRACE(shape(N, C, offset));
  const auto inp = rounded<E>(random_normal(std::size_t{1} * N * C, 211, 2.0f));
  const auto weight = rounded<E>(random_normal(C, 212));
  const auto bias = rounded<E>(random_normal(C, 213));
  const auto dout = rounded<E>(random_normal(inp.size(), 214));
  auto dinp = rounded<E>(random_normal(inp.size(), 215));
  auto dweight = random_normal(C, 216);
  auto dbias = random_normal(C, 217);
  std::vector<float> out(inp.size()), mean(N), rstd(N);
  DeviceBuffer<E> d_inp(narrow_all<E>(shifted(inp, offset))), d_weight(narrow_all<E>(shifted(weight, offset))),
      d_bias(narrow_all<E>(shifted(bias, offset))), d_dout(narrow_all<E>(shifted(dout, offset))),
      d_dinp(narrow_all<E>(shifted(dinp, offset))), d_out(narrow_all<E>(shifted(out, offset)));
  DeviceBuffer<float> d_dweight(dweight), d_dbias(dbias), d_mean(mean), d_rstd(rstd);
  ASSERT_CUDA(d_rstd.error());
  ASSERT_OK(cuda::layernorm_forward(d_out.get() + offset, d_mean.get(), d_rstd.get(), d_inp.get() + offset,
                                    d_weight.get() + offset, d_bias.get() + offset, N, C, stream));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(), bias.data(), N, C);
  expect_close("layernorm out", unshifted(widen_all(d_out.to_host()), offset), out, storage_rtol<E>());
  expect_close("layernorm mean", d_mean.to_host(), mean);
  expect_close("layernorm rstd", d_rstd.to_host(), rstd);
  DeviceBuffer<float> d_mean_cpu(mean), d_rstd_cpu(rstd);
  ASSERT_OK(cuda::layernorm_backward(d_dinp.get() + offset, d_dweight.get(), d_dbias.get(), d_dout.get() + offset,
                                     d_inp.get() + offset, d_weight.get() + offset, d_mean_cpu.get(), d_rstd_cpu.get(),
                                     N, C, stream));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  cpu::layernorm_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(), weight.data(),
                          mean.data(), rstd.data(), N, C);
  expect_close("layernorm dinp", unshifted(widen_all(d_dinp.to_host()), offset), dinp, storage_rtol<E>());
  expect_close("layernorm dweight", d_dweight.to_host(), dweight);
  expect_close("layernorm dbias", d_dbias.to_host(), dbias);
}

// C = 264: a partial last pack chunk per row and a partial last column strip (33 packs of 8, 66
// of 4); 768 and N = 1,100: GPT-2's width, more rows than a strip block's 256 slices x 4 batched
// rows; 3 and 2,056: the scalar form (not a multiple of 8; longer than a row kept in registers).
TYPED_TEST(VectorKernelsTest, LayerNormPacksAndScalarMatchCpu) {
  using E = TypeParam;
  layernorm_matches_cpu<E>(this->stream_, 37, 264, 0);
  layernorm_matches_cpu<E>(this->stream_, 37, 264, 1);
  layernorm_matches_cpu<E>(this->stream_, 1100, 768, 0);
  layernorm_matches_cpu<E>(this->stream_, 5, 3, 0);
  layernorm_matches_cpu<E>(this->stream_, 9, 2056, 0);
}

// dbias += Σ_rows dout, against a double-precision host sum.
TYPED_TEST(VectorKernelsTest, BiasGradientPacksAndScalarMatchHost) {
  using E = TypeParam;
  struct Case {
    int N, OC, offset;
  };
  for (const Case k : {Case{1100, 264, 0}, Case{1100, 264, 1}, Case{7, 768, 0}, Case{300, 37, 0}}) {
    SCOPED_TRACE(shape(k.N, k.OC, k.offset));
    const auto dout = rounded<E>(random_normal(std::size_t{1} * k.N * k.OC, 221));
    auto dbias = random_normal(k.OC, 222);
    DeviceBuffer<E> d_dout(narrow_all<E>(shifted(dout, k.offset)));
    DeviceBuffer<float> d_dbias(dbias);
    ASSERT_CUDA(d_dbias.error());
    ASSERT_OK(cuda::bias_backward(d_dbias.get(), d_dout.get() + k.offset, k.N, k.OC, dtype_of<E>(), this->stream_));
    this->sync();
    for (int o = 0; o < k.OC; ++o) {
      double sum = dbias[static_cast<std::size_t>(o)];
      for (int n = 0; n < k.N; ++n) sum += dout[static_cast<std::size_t>(n) * k.OC + o];
      dbias[static_cast<std::size_t>(o)] = static_cast<float>(sum);
    }
    expect_close("dbias", d_dbias.to_host(), dbias, 2e-5f);
  }
}

// Vocabulary-parallel cross-entropy backward, probs = (probs - [v == target - begin]) * scale in
// place: Vl = 264 (packs) and 37 (scalar), targets below, inside and above the rank's columns.
TYPED_TEST(VectorKernelsTest, CrossEntropyBackwardPacksAndScalarMatchHost) {
  using E = TypeParam;
  const int N = 29, begin = 40;
  const float scale = 0.25f;
  for (const int Vl : {264, 37}) {
    SCOPED_TRACE("Vl = " + std::to_string(Vl));
    const auto probs = rounded<E>(random_normal(std::size_t{1} * N * Vl, 231));
    std::vector<std::int32_t> targets(N);
    for (int n = 0; n < N; ++n) targets[static_cast<std::size_t>(n)] = (n * 37) % (Vl + 80);
    DeviceBuffer<E> d_probs(narrow_all<E>(probs));
    DeviceBuffer<std::int32_t> d_targets(targets);
    ASSERT_CUDA(d_targets.error());
    ASSERT_OK(cuda::ce_backward(d_probs.get(), d_targets.get(), begin, N, Vl, scale, dtype_of<E>(), this->stream_));
    this->sync();
    std::vector<float> expected(probs.size());
    for (int n = 0; n < N; ++n) {
      for (int v = 0; v < Vl; ++v) {
        const std::size_t i = static_cast<std::size_t>(n) * Vl + v;
        float d = probs[i];
        if (v == targets[static_cast<std::size_t>(n)] - begin) d -= 1.0f;
        expected[i] = d * scale;
      }
    }
    // The same two fp32 operations and one rounding: equal, up to one rounding step.
    expect_close_each("ce dlogits", widen_all(d_probs.to_host()), rounded<E>(expected), 2 * unit_roundoff<E>(), 0.0f);
  }
}

// softmax_crossentropy_backward at V = 1,024 (packs) and 1,003 (scalar), one row ignored.
TYPED_TEST(VectorKernelsTest, SoftmaxCrossEntropyBackwardPacksAndScalarMatchCpu) {
  using E = TypeParam;
  const int N = 9;
  for (const int V : {1024, 1003}) {
    SCOPED_TRACE("V = " + std::to_string(V));
    const auto probs = rounded<E>(random_normal(std::size_t{1} * N * V, 241));
    auto targets = random_tokens(N, V, 242);
    targets[4] = cpu::kDefaultIgnoreIndex;
    const auto dlosses = random_normal(N, 243);
    auto dlogits = rounded<E>(random_normal(probs.size(), 244));
    DeviceBuffer<E> d_probs(narrow_all<E>(probs)), d_dlogits(narrow_all<E>(dlogits));
    DeviceBuffer<float> d_dlosses(dlosses);
    DeviceBuffer<std::int32_t> d_targets(targets);
    ASSERT_CUDA(d_targets.error());
    ASSERT_OK(cuda::softmax_crossentropy_backward(d_dlogits.get(), d_dlosses.get(), d_probs.get(), d_targets.get(), N,
                                                  V, cpu::kDefaultIgnoreIndex, this->stream_));
    this->sync();
    cpu::softmax_crossentropy_backward(dlogits.data(), dlosses.data(), probs.data(), targets.data(), N, V,
                                       cpu::kDefaultIgnoreIndex);
    expect_close("softmax dlogits", widen_all(d_dlogits.to_host()), dlogits, storage_rtol<E>());
  }
}

// GeLU and the residual, aligned (packs and a tail of n % width) and one element off (scalar).
TYPED_TEST(VectorKernelsTest, GeluAndResidualPacksAndScalarMatchCpu) {
  using E = TypeParam;
  const std::size_t n = 10007;
  for (const int offset : {0, 1}) {
    SCOPED_TRACE("offset = " + std::to_string(offset));
    const auto x = rounded<E>(random_normal(n, 251, 3.0f));
    const auto y = rounded<E>(random_normal(n, 252));
    auto dx = rounded<E>(random_normal(n, 253));
    auto dy = rounded<E>(random_normal(n, 254));
    std::vector<float> gelu_out(n), sum_out(n);
    DeviceBuffer<E> d_x(narrow_all<E>(shifted(x, offset))), d_y(narrow_all<E>(shifted(y, offset))),
        d_dx(narrow_all<E>(shifted(dx, offset))), d_dy(narrow_all<E>(shifted(dy, offset))),
        d_gelu(narrow_all<E>(shifted(gelu_out, offset))), d_sum(narrow_all<E>(shifted(sum_out, offset)));
    ASSERT_CUDA(d_sum.error());
    const int o = offset;
    ASSERT_OK(cuda::gelu_forward(d_gelu.get() + o, d_x.get() + o, n, this->stream_));
    ASSERT_OK(cuda::residual_forward(d_sum.get() + o, d_x.get() + o, d_y.get() + o, n, this->stream_));
    // gelu backward into dx (dout = y), then the residual backward adds y to dx and dy.
    ASSERT_OK(cuda::gelu_backward(d_dx.get() + o, d_x.get() + o, d_y.get() + o, n, this->stream_));
    ASSERT_OK(cuda::residual_backward(d_dx.get() + o, d_dy.get() + o, d_y.get() + o, n, this->stream_));
    this->sync();
    cpu::gelu_forward(gelu_out.data(), x.data(), n);
    cpu::residual_forward(sum_out.data(), x.data(), y.data(), n);
    cpu::gelu_backward(dx.data(), x.data(), y.data(), n);
    dx = rounded<E>(dx);  // the device stores dx in E between the two backward kernels
    cpu::residual_backward(dx.data(), dy.data(), y.data(), n);
    expect_close("gelu out", unshifted(widen_all(d_gelu.to_host()), o), gelu_out, storage_rtol<E>());
    expect_close("residual out", unshifted(widen_all(d_sum.to_host()), o), sum_out, storage_rtol<E>());
    expect_close("gelu + residual dinp", unshifted(widen_all(d_dx.to_host()), o), dx, storage_rtol<E>());
    expect_close("residual dinp2", unshifted(widen_all(d_dy.to_host()), o), dy, storage_rtol<E>());
  }
}

}  // namespace
}  // namespace plansight::kernels
