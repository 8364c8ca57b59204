// Every CPU backward kernel against central finite differences of its forward. The scalar
// loss is Σ out·r for a fixed random r (so dout = r), summed in double; gradient buffers start
// at 0.5 to check that backward accumulates rather than overwrites.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "kernels_test_util.h"
#include "plansight/kernels/kernels.h"

namespace pk = plansight::kernels;
namespace cpu = plansight::kernels::cpu;
using pk::test::all_indices;
using pk::test::expect_gradient_matches;
using pk::test::filled;
using pk::test::minus;
using pk::test::random_normal;
using pk::test::random_tokens;
using pk::test::weighted_sum;

namespace {

constexpr float kPrefill = 0.5f;

class KernelsBackward : public ::testing::Test {
 protected:
  void SetUp() override { cpu::set_blas_threads(1); }
};

}  // namespace

TEST_F(KernelsBackward, Encoder) {
  const int B = 2, T = 3, C = 4, V = 5;
  const std::vector<std::int32_t> tokens = {1, 1, 3, 0, 1, 3};  // repeats must accumulate
  auto wte = random_normal(V * C, 1), wpe = random_normal(T * C, 2);
  const auto r = random_normal(B * T * C, 3);
  std::vector<float> out(B * T * C);
  auto loss = [&] {
    cpu::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return weighted_sum(out, r);
  };
  auto dwte = filled(wte.size(), kPrefill), dwpe = filled(wpe.size(), kPrefill);
  cpu::encoder_backward(dwte.data(), dwpe.data(), r.data(), tokens.data(), B, T, C);
  expect_gradient_matches("dwte", wte, minus(dwte, kPrefill), all_indices(wte.size()), loss);
  expect_gradient_matches("dwpe", wpe, minus(dwpe, kPrefill), all_indices(wpe.size()), loss);
}

TEST_F(KernelsBackward, LayerNorm) {
  const int N = 5, C = 16;
  auto inp = random_normal(N * C, 4, 1.5f, 0.3f);
  auto w = random_normal(C, 5, 0.5f, 1.0f), b = random_normal(C, 6, 0.5f);
  const auto r = random_normal(N * C, 7);
  std::vector<float> out(N * C), mean(N), rstd(N);
  auto loss = [&] {
    cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), N, C);
    return weighted_sum(out, r);
  };
  loss();
  auto dinp = filled(inp.size(), kPrefill), dw = filled(C, kPrefill), db = filled(C, kPrefill);
  cpu::layernorm_backward(dinp.data(), dw.data(), db.data(), r.data(), inp.data(), w.data(),
                          mean.data(), rstd.data(), N, C);
  expect_gradient_matches("dinp", inp, minus(dinp, kPrefill), all_indices(inp.size()), loss);
  expect_gradient_matches("dweight", w, minus(dw, kPrefill), all_indices(w.size()), loss);
  expect_gradient_matches("dbias", b, minus(db, kPrefill), all_indices(b.size()), loss);
}

TEST_F(KernelsBackward, Matmul) {
  const int N = 6, C = 8, OC = 5;
  auto inp = random_normal(N * C, 8), w = random_normal(OC * C, 9), b = random_normal(OC, 10);
  const auto r = random_normal(N * OC, 11);
  std::vector<float> out(N * OC);
  auto loss = [&] {
    cpu::matmul_forward(out.data(), inp.data(), w.data(), b.data(), N, C, OC);
    return weighted_sum(out, r);
  };
  auto dinp = filled(inp.size(), kPrefill), dw = filled(w.size(), kPrefill), db = filled(OC, kPrefill);
  cpu::matmul_backward(dinp.data(), dw.data(), db.data(), r.data(), inp.data(), w.data(), N, C, OC);
  expect_gradient_matches("dinp", inp, minus(dinp, kPrefill), all_indices(inp.size()), loss);
  expect_gradient_matches("dweight", w, minus(dw, kPrefill), all_indices(w.size()), loss);
  expect_gradient_matches("dbias", b, minus(db, kPrefill), all_indices(b.size()), loss);

  // Null dinp and dbias are skipped; the weight gradient is the same.
  auto dw_only = filled(w.size(), kPrefill);
  cpu::matmul_backward(nullptr, dw_only.data(), nullptr, r.data(), inp.data(), w.data(), N, C, OC);
  EXPECT_EQ(dw_only, dw);
}

TEST_F(KernelsBackward, Attention) {
  const int B = 2, T = 5, C = 8, NH = 2;
  auto qkv = random_normal(B * T * 3 * C, 12);
  const auto r = random_normal(B * T * C, 13);
  std::vector<float> out(B * T * C), att(B * NH * T * T), scratch(B * NH * T * T);
  auto loss = [&] {
    cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    return weighted_sum(out, r);
  };
  loss();
  auto dqkv = filled(qkv.size(), kPrefill);
  cpu::attention_backward(dqkv.data(), scratch.data(), r.data(), qkv.data(), att.data(), B, T, C, NH);
  expect_gradient_matches("dqkv", qkv, minus(dqkv, kPrefill), all_indices(qkv.size()), loss);
}

TEST_F(KernelsBackward, AttentionGradientDoesNotReachTheFuture) {
  // A loss on outputs t < 3 only: q, k and v of positions t >= 3 must get exactly zero.
  const int B = 1, T = 6, C = 8, NH = 2, cut = 3;
  const auto qkv = random_normal(B * T * 3 * C, 14);
  auto dout = random_normal(B * T * C, 15);
  for (int t = cut; t < T; ++t)
    for (int c = 0; c < C; ++c) dout[t * C + c] = 0.0f;
  std::vector<float> out(B * T * C), att(B * NH * T * T), scratch(B * NH * T * T), dqkv(qkv.size(), 0.0f);
  cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  cpu::attention_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
  for (int t = cut; t < T; ++t)
    for (int i = 0; i < 3 * C; ++i) EXPECT_EQ(dqkv[t * 3 * C + i], 0.0f) << "t=" << t << " i=" << i;
  double past = 0.0;
  for (int i = 0; i < cut * 3 * C; ++i) past += std::abs(dqkv[i]);
  EXPECT_GT(past, 0.0);
}

TEST_F(KernelsBackward, Gelu) {
  auto inp = random_normal(64, 16, 2.0f);
  inp[0] = 0.0f;
  inp[1] = -4.0f;
  const auto r = random_normal(64, 17);
  std::vector<float> out(64);
  auto loss = [&] {
    cpu::gelu_forward(out.data(), inp.data(), inp.size());
    return weighted_sum(out, r);
  };
  auto dinp = filled(64, kPrefill);
  cpu::gelu_backward(dinp.data(), inp.data(), r.data(), inp.size());
  expect_gradient_matches("dinp", inp, minus(dinp, kPrefill), all_indices(64), loss);
}

TEST_F(KernelsBackward, Residual) {
  auto a = random_normal(20, 18), b = random_normal(20, 19);
  const auto r = random_normal(20, 20);
  std::vector<float> out(20);
  auto loss = [&] {
    cpu::residual_forward(out.data(), a.data(), b.data(), out.size());
    return weighted_sum(out, r);
  };
  auto da = filled(20, kPrefill), db = filled(20, kPrefill);
  cpu::residual_backward(da.data(), db.data(), r.data(), 20);
  expect_gradient_matches("dinp1", a, minus(da, kPrefill), all_indices(20), loss);
  expect_gradient_matches("dinp2", b, minus(db, kPrefill), all_indices(20), loss);
}

TEST_F(KernelsBackward, SoftmaxCrossEntropyWithIgnoredPosition) {
  const int N = 5, V = 11, ignore = 99;
  auto logits = random_normal(N * V, 21, 2.0f);
  auto targets = random_tokens(N, V, 22);
  targets[3] = ignore;
  const auto dlosses = random_normal(N, 23);  // a weighted sum of the per-position losses
  std::vector<float> losses(N), probs(N * V);
  auto loss = [&] {
    cpu::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V, ignore);
    return weighted_sum(losses, dlosses);
  };
  loss();
  auto dlogits = filled(logits.size(), kPrefill);
  cpu::softmax_crossentropy_backward(dlogits.data(), dlosses.data(), probs.data(), targets.data(), N, V, ignore);
  expect_gradient_matches("dlogits", logits, minus(dlogits, kPrefill), all_indices(logits.size()), loss);
}

// Gradient::overwrite writes the input gradient that accumulate adds: over a NaN-filled buffer
// (so a read of the old contents would show), the result equals accumulating into zeros, for
// the GEMM's input gradient and for GeLU's; the weight and bias gradients still accumulate.
TEST_F(KernelsBackward, OverwrittenInputGradientsEqualAccumulatedIntoZeros) {
  const int N = 6, C = 5, OC = 7;
  const auto inp = random_normal(static_cast<std::size_t>(N) * C, 21);
  const auto weight = random_normal(static_cast<std::size_t>(OC) * C, 22);
  const auto dout = random_normal(static_cast<std::size_t>(N) * OC, 23);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto dinp_added = filled(inp.size(), 0.0f), dinp_written = filled(inp.size(), nan);
  auto dweight_added = filled(weight.size(), kPrefill), dweight_written = filled(weight.size(), kPrefill);
  auto dbias_added = filled(OC, kPrefill), dbias_written = filled(OC, kPrefill);
  cpu::matmul_backward(dinp_added.data(), dweight_added.data(), dbias_added.data(), dout.data(), inp.data(), weight.data(),
                       N, C, OC);
  cpu::matmul_backward(dinp_written.data(), dweight_written.data(), dbias_written.data(), dout.data(), inp.data(),
                       weight.data(), N, C, OC, pk::Gradient::overwrite);
  EXPECT_EQ(dinp_written, dinp_added);
  EXPECT_EQ(dweight_written, dweight_added) << "the weight gradient accumulates either way";
  EXPECT_EQ(dbias_written, dbias_added);
  auto alone = filled(inp.size(), nan);
  cpu::matmul_backward_input(alone.data(), dout.data(), weight.data(), N, C, OC, pk::Gradient::overwrite);
  EXPECT_EQ(alone, dinp_added);

  const auto x = random_normal(64, 24, 2.0f), dy = random_normal(64, 25);
  auto gelu_added = filled(64, 0.0f), gelu_written = filled(64, nan);
  cpu::gelu_backward(gelu_added.data(), x.data(), dy.data(), 64);
  cpu::gelu_backward(gelu_written.data(), x.data(), dy.data(), 64, pk::Gradient::overwrite);
  EXPECT_EQ(gelu_written, gelu_added);
}
