// The probe's CUDA backend against its CPU twin, operation by operation: the vocabulary-parallel
// embedding (tokens inside and outside the rank's rows), positions, the embedding gradient, the
// three steps of the vocabulary-parallel cross-entropy and its loss, its backward, the fused
// residual + bias, the bias gradient, shard accumulation and the fp32 <-> compute conversions.
// fp32 on the GPU equals the CPU within float rounding (1e-5 relative to the values' scale);
// bf16 within the 8-bit mantissa's rounding (2e-2). Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "backend.h"
#include "cuda_backend.h"
#include "device_test_util.h"
#include "rank_context.h"

namespace plansight::probe {
namespace {

using runtime::MemoryCategory;

std::vector<float> random_values(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A backend-owned array filled from host floats (in the backend's compute type when `act`).
struct Array {
  Array(Backend& be, const std::vector<float>& host, bool act) : be_(be), buf(be, MemoryCategory::buffers, host.size(), act ? be.act() : Elem::f32) {
    Buf f32(be, MemoryCategory::buffers, host.size());
    be.upload(f32.data(), host.data(), host.size() * sizeof(float));
    if (act) be.to_act(buf.data(), f32.f32(), host.size(), Queue::compute);
    else be.copy(buf.data(), f32.data(), f32.bytes(), Queue::compute);
    be.synchronize();
  }
  std::vector<float> read() {
    std::vector<float> out(buf.size());
    Buf f32(be_, MemoryCategory::buffers, buf.size());
    if (buf.elem() == Elem::f32) be_.copy(f32.data(), buf.data(), buf.bytes(), Queue::compute);
    else be_.to_f32(f32.f32(), buf.data(), buf.size(), Queue::compute);
    be_.download(out.data(), f32.data(), out.size() * sizeof(float));
    return out;
  }
  Backend& be_;
  Buf buf;
};

struct Tokens {
  Tokens(Backend& be, const std::vector<std::int32_t>& host) : buf(be, MemoryCategory::buffers, host.size(), Elem::i32) {
    be.upload(buf.data(), host.data(), host.size() * sizeof(std::int32_t));
  }
  Buf buf;
};

void expect_near_all(const std::vector<float>& gpu, const std::vector<float>& cpu, double rtol, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  double scale = 0;
  for (float c : cpu) scale = std::max(scale, std::fabs(static_cast<double>(c)));
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_NEAR(gpu[i], cpu[i], rtol * (std::fabs(cpu[i]) + scale)) << what << " element " << i;
  }
}

class ProbeBackend : public ::testing::TestWithParam<Elem> {
 protected:
  void SetUp() override {
    PLANSIGHT_SKIP_WITHOUT_DEVICE();
    cpu_ = make_cpu_backend();
    cuda::CudaPrecision p;
    p.act = GetParam();
    auto gpu = cuda::make_cuda_backend(0, p);
    ASSERT_TRUE(gpu.ok()) << gpu.error_text();
    gpu_ = std::move(*gpu);
    rtol_ = GetParam() == Elem::f32 ? 1e-5 : 2e-2;
  }
  std::unique_ptr<Backend> cpu_, gpu_;
  double rtol_ = 1e-5;
};

constexpr int N = 24, C = 40, T = 8, Vl = 48;

TEST_P(ProbeBackend, VocabularyParallelEmbeddingForwardAndBackward) {
  const int begin = 16, rows = Vl;
  std::vector<std::int32_t> tokens(N);
  for (int n = 0; n < N; ++n) tokens[static_cast<std::size_t>(n)] = (n * 7) % 80;  // some below, inside and above the rows
  const auto wte = random_values(static_cast<std::size_t>(rows) * C, 1);
  const auto wpe = random_values(static_cast<std::size_t>(T) * C, 2);
  const auto dout = random_values(static_cast<std::size_t>(N) * C, 3);
  std::vector<std::vector<float>> out, dwte, dwpe;
  for (Backend* be : {cpu_.get(), gpu_.get()}) {
    Array w(*be, wte, true), p(*be, wpe, true), y(*be, std::vector<float>(static_cast<std::size_t>(N) * C), true);
    Array d(*be, dout, true), gw(*be, std::vector<float>(wte.size()), false), gp(*be, std::vector<float>(wpe.size()), false);
    Tokens t(*be, tokens);
    be->embedding_lookup(y.buf.data(), t.buf.i32(), w.buf.data(), begin, rows, N, C);
    be->add_positions(y.buf.data(), p.buf.data(), N, T, C);
    be->embedding_backward(gw.buf.f32(), gp.buf.f32(), d.buf.data(), t.buf.i32(), begin, rows, N, T, C);
    out.push_back(y.read());
    dwte.push_back(gw.read());
    dwpe.push_back(gp.read());
  }
  expect_near_all(out[1], out[0], rtol_, "embedding output");
  expect_near_all(dwte[1], dwte[0], rtol_, "dwte");
  expect_near_all(dwpe[1], dwpe[0], rtol_, "dwpe");
  // Token 0 lies below the rank's rows: its lookup is zero, so its output is its position alone,
  // on each backend (the GPU's in its element type: wpe rounded to it, near).
  for (int c = 0; c < C; ++c) EXPECT_EQ(out[0][static_cast<std::size_t>(c)], wpe[static_cast<std::size_t>(c)]);
  for (int c = 0; c < C; ++c) {
    const float w = wpe[static_cast<std::size_t>(c)];
    EXPECT_NEAR(out[1][static_cast<std::size_t>(c)], w, rtol_ * std::max(1.0f, std::fabs(w))) << "GPU column " << c;
  }
}

TEST_P(ProbeBackend, VocabularyParallelCrossEntropyLossAndGradient) {
  const int begin = 48, valid = 40;  // the last 8 of this rank's columns are vocabulary padding
  std::vector<std::int32_t> targets(N);
  for (int n = 0; n < N; ++n) targets[static_cast<std::size_t>(n)] = 40 + (n * 5) % 60;  // inside and outside the rank
  const auto logits = random_values(static_cast<std::size_t>(N) * Vl, 4, 2.0f);
  std::vector<std::vector<float>> probs, grads;
  std::vector<double> losses;
  for (Backend* be : {cpu_.get(), gpu_.get()}) {
    Array z(*be, logits, true);
    Array maxima(*be, std::vector<float>(N), false), sums(*be, std::vector<float>(2 * N), false);
    Tokens t(*be, targets);
    // tp = 1: the rank's own maxima are the gathered ones.
    be->ce_row_max(maxima.buf.f32(), z.buf.data(), N, Vl, valid);
    be->ce_exp(z.buf.data(), sums.buf.f32(), maxima.buf.f32(), 1, t.buf.i32(), begin, N, Vl, valid);
    be->ce_normalize(z.buf.data(), sums.buf.f32(), maxima.buf.f32(), 1, N, Vl, valid);
    losses.push_back(be->take_loss());
    probs.push_back(z.read());
    be->ce_backward(z.buf.data(), t.buf.i32(), begin, N, Vl, 0.25f);
    grads.push_back(z.read());
    EXPECT_EQ(be->take_loss(), 0.0) << "take_loss empties the accumulator";
  }
  expect_near_all(probs[1], probs[0], rtol_, "probabilities");
  expect_near_all(grads[1], grads[0], rtol_, "logit gradients");
  EXPECT_NEAR(losses[1], losses[0], rtol_ * std::fabs(losses[0]) + 1e-6);
  for (int n = 0; n < N; ++n) {
    for (int v = valid; v < Vl; ++v) EXPECT_EQ(probs[1][static_cast<std::size_t>(n) * Vl + v], 0.0f) << "padding column";
  }
}

TEST_P(ProbeBackend, ResidualBiasBiasGradientAndShardAccumulation) {
  const auto out0 = random_values(static_cast<std::size_t>(N) * C, 5), base = random_values(out0.size(), 6);
  const auto bias = random_values(static_cast<std::size_t>(C), 7), dout = random_values(out0.size(), 8);
  const auto acc0 = random_values(256, 9), add = random_values(256, 10);
  std::vector<std::vector<float>> with_bias, without_bias, dbias, acc;
  for (Backend* be : {cpu_.get(), gpu_.get()}) {
    Array o1(*be, out0, true), o2(*be, out0, true), b(*be, base, true), bi(*be, bias, true), d(*be, dout, true);
    Array db(*be, std::vector<float>(static_cast<std::size_t>(C), 1.0f), false), a(*be, acc0, false), s(*be, add, false);
    be->residual_bias(o1.buf.data(), b.buf.data(), bi.buf.data(), N, C);
    be->residual_bias(o2.buf.data(), b.buf.data(), nullptr, N, C);
    be->bias_backward(db.buf.f32(), d.buf.data(), N, C);
    be->add_f32(a.buf.f32(), s.buf.f32(), acc0.size(), Queue::grad);
    be->fence(Queue::grad, Queue::compute);
    with_bias.push_back(o1.read());
    without_bias.push_back(o2.read());
    dbias.push_back(db.read());
    acc.push_back(a.read());
  }
  expect_near_all(with_bias[1], with_bias[0], rtol_, "residual + bias");
  expect_near_all(without_bias[1], without_bias[0], rtol_, "residual");
  expect_near_all(dbias[1], dbias[0], rtol_, "bias gradient (accumulated onto 1)");
  expect_near_all(acc[1], acc[0], 1e-6, "fp32 shard accumulation on the gradient queue");
}

TEST_P(ProbeBackend, AllocationsAreZeroedAndCounted) {
  Backend& be = *gpu_;
  const auto before = be.memory().current();
  {
    Buf a(be, MemoryCategory::activations, 1000, be.act());
    Buf g(be, MemoryCategory::gradients, 10);
    EXPECT_EQ(be.memory().current()[MemoryCategory::activations] - before[MemoryCategory::activations],
              static_cast<std::int64_t>(1000 * elem_bytes(be.act())));
    EXPECT_EQ(be.memory().current()[MemoryCategory::gradients] - before[MemoryCategory::gradients], 40);
    std::vector<float> host(10, 1.0f);
    be.download(host.data(), g.data(), g.bytes());
    for (float x : host) EXPECT_EQ(x, 0.0f);
  }
  EXPECT_EQ(be.memory().current().total(), before.total());
}

// Fill::none skips the memset launch (backend.h) but not the accounting; a zeroed allocation
// that the stream-ordered pool serves from a block an unfilled one left holding ones still
// reads zero (the memset runs for every Fill::zeros allocation, reused block or not).
TEST_P(ProbeBackend, AnUnfilledAllocationIsCountedAndLeavesLaterZeroedOnesZero) {
  Backend& be = *gpu_;
  const auto before = be.memory().current();
  const std::vector<float> ones(1000, 1.0f);
  {
    Buf none(be, MemoryCategory::activations, ones.size(), Elem::f32, Fill::none);
    EXPECT_EQ(be.memory().current()[MemoryCategory::activations] - before[MemoryCategory::activations], 4000);
    be.upload(none.data(), ones.data(), none.bytes());
    std::vector<float> back(ones.size(), 0.0f);
    be.download(back.data(), none.data(), none.bytes());
    EXPECT_EQ(back, ones);
  }
  EXPECT_EQ(be.memory().current().total(), before.total());
  Buf zeros(be, MemoryCategory::activations, ones.size(), Elem::f32);
  std::vector<float> host(ones.size(), 1.0f);
  be.download(host.data(), zeros.data(), zeros.bytes());
  for (float x : host) ASSERT_EQ(x, 0.0f);
}

TEST_P(ProbeBackend, AnAllocationTheGpuCannotHoldSaysDoesNotFit) {
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  try {
    // The device's memory and 1 GiB more, in elements of 2 bytes or more.
    Buf huge(*gpu_, MemoryCategory::activations, (total_bytes + (std::size_t{1} << 30)) / 2);
    FAIL() << "an allocation larger than the device's " << total_bytes << " bytes succeeded";
  } catch (const RankFailure& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Types, ProbeBackend, ::testing::Values(Elem::f32, Elem::bf16),
                         [](const auto& p) { return std::string(to_string(p.param)); });

}  // namespace
}  // namespace plansight::probe
