// Forward kernels on the CPU against naive double-precision loops written from the formulas,
// plus properties: attention causality, cross-entropy = -log softmax, the ignore index, the
// closed form of one AdamW step, and several threads calling kernels at once.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "kernels_test_util.h"
#include "plansight/kernels/kernels.h"

namespace pk = plansight::kernels;
namespace cpu = plansight::kernels::cpu;
using pk::test::random_normal;
using pk::test::random_tokens;

namespace {

class KernelsForward : public ::testing::Test {
 protected:
  void SetUp() override { cpu::set_blas_threads(1); }
};

// Naive causal attention for one (b, t, head): softmax over s <= t of q·k/sqrt(hs), then Σ p v.
std::vector<double> naive_attention(const std::vector<float>& qkv, std::vector<double>& probs,
                                    int B, int T, int C, int NH) {
  const int hs = C / NH;
  std::vector<double> out(static_cast<std::size_t>(B) * T * C, 0.0);
  probs.assign(static_cast<std::size_t>(B) * NH * T * T, 0.0);
  auto at = [&](int b, int t, int part, int h, int i) {
    return double{qkv[(static_cast<std::size_t>(b) * T + t) * 3 * C + part * C + h * hs + i]};
  };
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T; ++t) {
        std::vector<double> score(t + 1);
        double max_score = -1e300;
        for (int s = 0; s <= t; ++s) {
          double dot = 0.0;
          for (int i = 0; i < hs; ++i) dot += at(b, t, 0, h, i) * at(b, s, 1, h, i);
          score[s] = dot / std::sqrt(double(hs));
          max_score = std::max(max_score, score[s]);
        }
        double sum = 0.0;
        for (double& x : score) sum += (x = std::exp(x - max_score));
        for (int s = 0; s <= t; ++s) {
          const double p = score[s] / sum;
          probs[((static_cast<std::size_t>(b) * NH + h) * T + t) * T + s] = p;
          for (int i = 0; i < hs; ++i)
            out[(static_cast<std::size_t>(b) * T + t) * C + h * hs + i] += p * at(b, s, 2, h, i);
        }
      }
  return out;
}

}  // namespace

TEST_F(KernelsForward, EncoderAddsTokenAndPositionRows) {
  const int B = 2, T = 3, C = 4, V = 5;
  const std::vector<std::int32_t> tokens = {4, 0, 4, 1, 1, 2};
  const auto wte = random_normal(V * C, 1), wpe = random_normal(T * C, 2);
  std::vector<float> out(B * T * C);
  cpu::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c)
        EXPECT_EQ(out[(b * T + t) * C + c], wte[tokens[b * T + t] * C + c] + wpe[t * C + c]);
}

TEST_F(KernelsForward, LayerNormMatchesNaiveLoop) {
  const int N = 7, C = 33;
  const auto inp = random_normal(N * C, 3, 2.0f, 0.5f);
  const auto w = random_normal(C, 4), bias = random_normal(C, 5);
  std::vector<float> out(N * C), mean(N), rstd(N);
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), bias.data(), N, C);
  for (int n = 0; n < N; ++n) {
    double m = 0.0, var = 0.0;
    for (int c = 0; c < C; ++c) m += inp[n * C + c] / double(C);
    for (int c = 0; c < C; ++c) var += (inp[n * C + c] - m) * (inp[n * C + c] - m) / C;
    const double s = 1.0 / std::sqrt(var + 1e-5);
    EXPECT_NEAR(mean[n], m, 1e-6);
    EXPECT_NEAR(rstd[n], s, 1e-6 * s);
    for (int c = 0; c < C; ++c)
      EXPECT_NEAR(out[n * C + c], (inp[n * C + c] - m) * s * w[c] + bias[c], 1e-5);
  }
}

TEST_F(KernelsForward, MatmulMatchesNaiveLoopWithAndWithoutBias) {
  const int N = 9, C = 17, OC = 13;
  const auto inp = random_normal(N * C, 6), w = random_normal(OC * C, 7), bias = random_normal(OC, 8);
  for (const float* b : {bias.data(), static_cast<const float*>(nullptr)}) {
    std::vector<float> out(N * OC, 123.0f);  // must be overwritten, not accumulated
    cpu::matmul_forward(out.data(), inp.data(), w.data(), b, N, C, OC);
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) {
        double ref = b ? b[o] : 0.0;
        for (int c = 0; c < C; ++c) ref += double{inp[n * C + c]} * w[o * C + c];
        EXPECT_NEAR(out[n * OC + o], ref, 1e-5 * (1.0 + std::abs(ref)));
      }
  }
}

TEST_F(KernelsForward, AttentionMatchesNaiveLoop) {
  const int B = 2, T = 6, C = 12, NH = 3;
  const auto qkv = random_normal(B * T * 3 * C, 9);
  std::vector<float> out(B * T * C), att(B * NH * T * T, 7.0f);
  cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  std::vector<double> probs;
  const auto ref = naive_attention(qkv, probs, B, T, C, NH);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-5) << i;
  for (std::size_t i = 0; i < att.size(); ++i) EXPECT_NEAR(att[i], probs[i], 1e-6) << i;
}

TEST_F(KernelsForward, AttentionIsCausal) {
  const int B = 2, T = 7, C = 8, NH = 2, changed = 4;
  auto qkv = random_normal(B * T * 3 * C, 10);
  std::vector<float> before(B * T * C), after(B * T * C), att(B * NH * T * T);
  cpu::attention_forward(before.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int i = 0; i < 3 * C; ++i) qkv[(1 * T + changed) * 3 * C + i] += 1.5f;  // batch 1, t = 4
  cpu::attention_forward(after.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      bool differs = false;
      for (int c = 0; c < C; ++c) differs |= before[(b * T + t) * C + c] != after[(b * T + t) * C + c];
      EXPECT_EQ(differs, b == 1 && t >= changed) << "b=" << b << " t=" << t;
    }
}

TEST_F(KernelsForward, AttentionRejectsHeadsThatDoNotDivideC) {
  std::vector<float> buf(1000);
  EXPECT_THROW(cpu::attention_forward(buf.data(), buf.data(), buf.data(), 1, 2, 10, 4),
               std::invalid_argument);
}

TEST_F(KernelsForward, GeluMatchesFormulaAndErfGelu) {
  // Values of 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) evaluated in double.
  const std::vector<float> x = {-3.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f};
  const std::vector<double> expected = {-0.0036373920817729943, -0.15880800939172324,
                                        -0.15428599017485606,   0.0,
                                        0.34571400982514394,    0.8411919906082768,
                                        2.996362607918227};
  std::vector<float> out(x.size());
  cpu::gelu_forward(out.data(), x.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(out[i], expected[i], 2e-7) << x[i];
  // The tanh form approximates the exact x·Phi(x) to within 4.8e-4 on [-6, 6] (max found by a
  // dense scan in double); it must stay that close here too.
  std::vector<float> grid(1201), approx(1201);
  for (int i = 0; i <= 1200; ++i) grid[i] = -6.0f + 0.01f * static_cast<float>(i);
  cpu::gelu_forward(approx.data(), grid.data(), grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const double exact = grid[i] * 0.5 * (1.0 + std::erf(grid[i] / std::sqrt(2.0)));
    EXPECT_NEAR(approx[i], exact, 5e-4) << grid[i];
  }
}

TEST_F(KernelsForward, ResidualAdds) {
  const auto a = random_normal(50, 11), b = random_normal(50, 12);
  std::vector<float> out(50);
  cpu::residual_forward(out.data(), a.data(), b.data(), out.size());
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], a[i] + b[i]);
}

TEST_F(KernelsForward, CrossEntropyIsMinusLogSoftmax) {
  const int N = 6, V = 23;
  auto logits = random_normal(N * V, 13, 3.0f);
  logits[2 * V + 5] = 1000.0f;  // a huge logit must not overflow the softmax
  const auto targets = random_tokens(N, V, 14);
  std::vector<float> losses(N), probs(N * V);
  cpu::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V,
                                    cpu::kDefaultIgnoreIndex);
  for (int n = 0; n < N; ++n) {
    double z_max = -1e300, sum = 0.0, prob_sum = 0.0;
    for (int j = 0; j < V; ++j) z_max = std::max(z_max, double{logits[n * V + j]});
    for (int j = 0; j < V; ++j) sum += std::exp(logits[n * V + j] - z_max);
    for (int j = 0; j < V; ++j) {
      const double p = std::exp(logits[n * V + j] - z_max) / sum;
      EXPECT_NEAR(probs[n * V + j], p, 1e-6);
      prob_sum += probs[n * V + j];
    }
    EXPECT_NEAR(prob_sum, 1.0, 1e-5);
    const double expected = -(logits[n * V + targets[n]] - z_max - std::log(sum));
    EXPECT_NEAR(losses[n], expected, 1e-5 * (1.0 + expected));
    EXPECT_TRUE(std::isfinite(losses[n]));
    if (probs[n * V + targets[n]] > 1e-30f) {
      EXPECT_NEAR(losses[n], -std::log(probs[n * V + targets[n]]), 1e-5 * (1.0 + expected));
    }
  }
}

TEST_F(KernelsForward, CrossEntropyOfUniformLogitsIsLogV) {
  const int N = 3, V = 64;
  const std::vector<float> logits(N * V, 0.25f);
  const std::vector<std::int32_t> targets = {0, 17, 63};
  std::vector<float> losses(N), probs(N * V);
  cpu::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V,
                                    cpu::kDefaultIgnoreIndex);
  for (float loss : losses) EXPECT_NEAR(loss, std::log(64.0), 1e-6);
}

TEST_F(KernelsForward, IgnoredPositionsHaveZeroLossAndGradient) {
  const int N = 4, V = 8, ignore = -7;
  const auto logits = random_normal(N * V, 15);
  const std::vector<std::int32_t> targets = {3, ignore, 0, ignore};
  std::vector<float> losses(N), probs(N * V), dlogits(N * V, 0.0f);
  const std::vector<float> dlosses(N, 0.5f);
  cpu::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V, ignore);
  cpu::softmax_crossentropy_backward(dlogits.data(), dlosses.data(), probs.data(), targets.data(), N, V, ignore);
  for (int n : {1, 3}) {
    EXPECT_EQ(losses[n], 0.0f);
    for (int j = 0; j < V; ++j) EXPECT_EQ(dlogits[n * V + j], 0.0f);
  }
  for (int n : {0, 2}) {
    EXPECT_GT(losses[n], 0.0f);
    double row_sum = 0.0;  // Σ_j (p_j - onehot_j) = 0 for a kept row
    for (int j = 0; j < V; ++j) row_sum += dlogits[n * V + j];
    EXPECT_NEAR(row_sum, 0.0, 1e-6);
  }
}

TEST_F(KernelsForward, AdamWFirstStepMatchesClosedForm) {
  // After one step from m = v = 0 the bias-corrected moments are m^ = g and v^ = g^2, so
  // p1 = p0 - lr (g / (|g| + eps) + wd p0)  (Loshchilov & Hutter 2019, Algorithm 2, t = 1).
  pk::AdamWSettings s;
  s.learning_rate = 0.01f;
  s.beta1 = 0.8f;
  s.beta2 = 0.95f;
  s.eps = 1e-3f;
  s.weight_decay = 0.1f;
  auto params = random_normal(40, 16);
  const auto grads = random_normal(40, 17, 0.01f);
  const auto p0 = params;
  std::vector<float> m(40, 0.0f), v(40, 0.0f);
  cpu::adamw_update(params.data(), m.data(), v.data(), grads.data(), params.size(), s, 1);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double g = grads[i];
    const double expected = p0[i] - 0.01 * (g / (std::abs(g) + 1e-3) + 0.1 * p0[i]);
    EXPECT_NEAR(params[i], expected, 1e-6);
    EXPECT_NEAR(m[i], 0.2 * g, 1e-8);
    EXPECT_NEAR(v[i], 0.05 * g * g, 1e-10);
  }
}

TEST_F(KernelsForward, AdamWThreeStepsMatchDoubleReference) {
  pk::AdamWSettings s;
  s.learning_rate = 0.05f;
  s.weight_decay = 0.01f;
  auto params = random_normal(30, 18);
  std::vector<double> p(params.begin(), params.end()), md(30, 0.0), vd(30, 0.0);
  std::vector<float> m(30, 0.0f), v(30, 0.0f);
  for (int step = 1; step <= 3; ++step) {
    const auto grads = random_normal(30, 100u + static_cast<unsigned>(step));
    cpu::adamw_update(params.data(), m.data(), v.data(), grads.data(), params.size(), s, step);
    for (std::size_t i = 0; i < p.size(); ++i) {
      md[i] = 0.9 * md[i] + 0.1 * grads[i];
      vd[i] = 0.999 * vd[i] + 0.001 * grads[i] * grads[i];
      const double m_hat = md[i] / (1.0 - std::pow(0.9, step));
      const double v_hat = vd[i] / (1.0 - std::pow(0.999, step));
      p[i] -= 0.05 * (m_hat / (std::sqrt(v_hat) + 1e-8) + 0.01 * p[i]);
    }
  }
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(params[i], p[i], 1e-5);
}

TEST_F(KernelsForward, BlasThreadCountCanBeSet) {
  cpu::set_blas_threads(0);  // clamped to 1
  EXPECT_EQ(cpu::blas_threads(), 1);
}

TEST_F(KernelsForward, ThreadsCallingKernelsAtOnceGetSerialResults) {
  // Ranks of the probe are threads: the kernels keep no state, so results must not depend on
  // what the other threads do meanwhile.
  const int B = 2, T = 16, C = 32, NH = 4, OC = 3 * C;
  const auto inp = random_normal(B * T * C, 19), w = random_normal(OC * C, 20, 0.2f);
  auto run = [&](std::vector<float>& out) {
    std::vector<float> qkv(B * T * OC), att(B * NH * T * T);
    out.assign(B * T * C, 0.0f);
    for (int repeat = 0; repeat < 20; ++repeat) {
      cpu::matmul_forward(qkv.data(), inp.data(), w.data(), nullptr, B * T, C, OC);
      cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    }
  };
  std::vector<float> serial;
  run(serial);
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results) threads.emplace_back(run, std::ref(r));
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, serial);
}
