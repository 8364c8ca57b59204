// The allocation fill of the CPU backend (backend.h, Fill): a Fill::none array is poisoned with
// kUnsetPoisonByte (NaN in fp32, -1 in int32) so that a buffer wrongly marked `none` turns the CPU
// equivalence tests' losses into NaN, while a Fill::zeros array reads zero even when its block
// is a poisoned one the tracker reused. Also the kernel properties the probe's `none`s rely on:
// a beta-0 GEMM and the attention forward write every element of a poisoned output, and an
// accumulating backward kernel into one gives NaN, which is how the poison shows a wrong `none`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "backend.h"

namespace plansight::probe {
namespace {

using runtime::MemoryCategory;

std::vector<float> read_f32(const Buf& b) {
  std::vector<float> out(b.size());
  std::memcpy(out.data(), b.data(), b.bytes());
  return out;
}

Buf filled(Backend& be, const std::vector<float>& values) {
  Buf b(be, MemoryCategory::buffers, values.size(), Elem::f32, Fill::none);
  be.upload(b.data(), values.data(), b.bytes());
  return b;
}

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>(i % 17) - 8.0f);
  return v;
}

TEST(CpuBackendFill, ANoneAllocationReadsAsPoisonInEveryElementType) {
  auto be = make_cpu_backend();
  Buf f32(*be, MemoryCategory::activations, 1000, Elem::f32, Fill::none);
  for (float x : read_f32(f32)) ASSERT_TRUE(std::isnan(x));
  Buf i32(*be, MemoryCategory::activations, 33, Elem::i32, Fill::none);
  for (std::size_t i = 0; i < i32.size(); ++i) ASSERT_EQ(i32.i32()[i], -1);  // 0xFFFFFFFF
  // Every byte, also of an array whose bytes are not a whole number of floats (a 2-byte type).
  Buf odd(*be, MemoryCategory::activations, 3, Elem::bf16, Fill::none);
  const auto* bytes = static_cast<const unsigned char*>(odd.data());
  for (std::size_t i = 0; i < odd.bytes(); ++i) ASSERT_EQ(bytes[i], kUnsetPoisonByte);
}

TEST(CpuBackendFill, AZerosAllocationReadsZeroEvenOnAReusedPoisonedBlock) {
  auto be = make_cpu_backend();
  Buf first(*be, MemoryCategory::activations, 512, Elem::f32, Fill::none);
  const void* block = first.data();
  first.reset();
  Buf zeros(*be, MemoryCategory::activations, 512);  // the default fill
  ASSERT_EQ(zeros.data(), block) << "the tracker reuses a released block of the same size";
  for (float x : read_f32(zeros)) ASSERT_EQ(x, 0.0f);
  // And the other way round: a reused zeroed block is poisoned when asked for `none`.
  zeros.reset();
  Buf none(*be, MemoryCategory::activations, 512, Elem::f32, Fill::none);
  ASSERT_EQ(none.data(), block);
  for (float x : read_f32(none)) ASSERT_TRUE(std::isnan(x));
}

TEST(CpuBackendFill, TheFillLeavesTheMemoryAccountingAsItIs) {
  auto be = make_cpu_backend();
  {
    Buf none(*be, MemoryCategory::activations, 100, Elem::f32, Fill::none);
    EXPECT_EQ(be->memory().current()[MemoryCategory::activations], 400);
    Buf zeros(*be, MemoryCategory::activations, 100, Elem::f32, Fill::zeros);
    EXPECT_EQ(be->memory().current()[MemoryCategory::activations], 800);
    EXPECT_EQ(be->memory().peak_total(), 800);
  }
  EXPECT_EQ(be->memory().current()[MemoryCategory::activations], 0);
}

// The writes the probe's `none` activations rely on (transformer_block.cpp, embedding_head.cpp):
// OpenBLAS's sgemm with beta 0 does not read C, so its poison does not reach the output, and
// the attention forward writes the probabilities above the diagonal (zeros) too.
TEST(CpuBackendFill, ForwardKernelsWriteEveryElementOfAPoisonedOutput) {
  auto be = make_cpu_backend();
  const int N = 6, C = 8, OC = 5;
  Buf inp = filled(*be, ramp(static_cast<std::size_t>(N) * C, 0.1f));
  Buf weight = filled(*be, ramp(static_cast<std::size_t>(OC) * C, 0.05f));
  Buf poisoned(*be, MemoryCategory::activations, static_cast<std::size_t>(N) * OC, Elem::f32, Fill::none);
  Buf zeroed(*be, MemoryCategory::activations, static_cast<std::size_t>(N) * OC);
  be->matmul_forward(poisoned.data(), inp.data(), weight.data(), nullptr, N, C, OC);
  be->matmul_forward(zeroed.data(), inp.data(), weight.data(), nullptr, N, C, OC);
  EXPECT_EQ(read_f32(poisoned), read_f32(zeroed));  // bit for bit: no NaN, nothing added

  const int B = 2, T = 4, NH = 2;
  Buf qkv = filled(*be, ramp(static_cast<std::size_t>(B) * T * 3 * C, 0.2f));
  Buf out(*be, MemoryCategory::activations, static_cast<std::size_t>(B) * T * C, Elem::f32, Fill::none);
  Buf att(*be, MemoryCategory::activations, static_cast<std::size_t>(B) * NH * T * T, Elem::f32, Fill::none);
  be->attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  for (float x : read_f32(out)) ASSERT_TRUE(std::isfinite(x));
  const std::vector<float> probs = read_f32(att);
  for (std::size_t i = 0; i < probs.size(); ++i) {
    const auto t = static_cast<int>(i / T % T), s = static_cast<int>(i % T);
    if (s > t) ASSERT_EQ(probs[i], 0.0f) << "masked probability " << i;
    else ASSERT_TRUE(std::isfinite(probs[i]));
  }
}

// What the poison is for: GeLU's backward accumulates into dinp (dinp += gelu'(x) dout), so a
// `none` there is a bug, and the poison makes it NaN instead of a silently right answer. Asked
// to overwrite (kernels::Gradient), it writes the unfilled array whole and reads none of it.
TEST(CpuBackendFill, AnAccumulatingKernelIntoAnUnfilledArrayGivesNaN) {
  auto be = make_cpu_backend();
  const std::size_t n = 64;
  Buf x = filled(*be, ramp(n, 0.3f)), dout = filled(*be, ramp(n, 0.1f));
  Buf wrong(*be, MemoryCategory::activations, n, Elem::f32, Fill::none);
  Buf right(*be, MemoryCategory::activations, n);
  Buf written(*be, MemoryCategory::activations, n, Elem::f32, Fill::none);
  be->gelu_backward(wrong.data(), x.data(), dout.data(), n, kernels::Gradient::accumulate);
  be->gelu_backward(right.data(), x.data(), dout.data(), n, kernels::Gradient::accumulate);
  be->gelu_backward(written.data(), x.data(), dout.data(), n, kernels::Gradient::overwrite);
  for (float v : read_f32(wrong)) ASSERT_TRUE(std::isnan(v));
  for (float v : read_f32(right)) ASSERT_TRUE(std::isfinite(v));
  EXPECT_EQ(read_f32(written), read_f32(right));
}

}  // namespace
}  // namespace plansight::probe
