// Embedding and head kernels of the probe. The vocabulary-parallel lookup and cross-entropy are
// loops here (the kernels' encoder and softmax assume the whole vocabulary); the GEMM and the
// LayerNorms are the CPU kernels.
#include "embedding_head.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "plansight/kernels/layernorm.h"
#include "plansight/kernels/matmul.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
namespace kc = plansight::kernels::cpu;
using runtime::MemoryCategory;
using runtime::TrackedBuffer;

}  // namespace

TensorDesc word_embedding_tensor(const Dims& d, const char* name) {
  TensorDesc t;
  t.name = name;
  t.rows = d.Vp;
  t.cols = d.C;
  t.valid_rows = d.V;
  t.split = Split::vocab_rows;
  return t;
}

TensorDesc position_tensor(const Dims& d) {
  TensorDesc t;
  t.name = "wpe";
  t.rows = d.maxT;
  t.cols = d.C;
  t.stddev = 0.01f;  // GPT-2's position table initialisation
  return t;
}

std::vector<TensorDesc> final_norm_tensors(const Dims& d) {
  TensorDesc w, b;
  w.name = "lnf.w";
  w.rows = d.C;
  w.init = Init::ones;
  b.name = "lnf.b";
  b.rows = d.C;
  b.init = Init::zeros;
  return {w, b};
}

void embedding_forward(RankContext& ctx, ParamUnit& wte, ParamUnit& wpe, const std::int32_t* tokens, float* out,
                       int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  const int C = d.C, begin = ctx.at.tp * d.Vl(), end = begin + d.Vl();
  {
    auto s = ctx.compute("embedding", est::Phase::forward, stage, mb);
    const float* w = wte.param(0);
    for (int n = 0; n < d.N(); ++n) {
      float* row = out + static_cast<std::size_t>(n) * C;
      const int tok = tokens[n];
      if (tok >= begin && tok < end) std::memcpy(row, w + static_cast<std::size_t>(tok - begin) * C, C * sizeof(float));
      else std::fill(row, row + C, 0.0f);
    }
  }
  ctx.all_reduce(*ctx.tp, out, static_cast<std::size_t>(d.N()) * C, "tp.all_reduce", est::Phase::forward, stage, mb);
  auto s = ctx.compute("embedding", est::Phase::forward, stage, mb);
  const float* pos = wpe.param(0);
  for (int n = 0; n < d.N(); ++n) {
    float* row = out + static_cast<std::size_t>(n) * C;
    const float* p = pos + static_cast<std::size_t>(n % d.T) * C;
    for (int c = 0; c < C; ++c) row[c] += p[c];
  }
}

void embedding_backward(RankContext& ctx, ParamUnit& wte, ParamUnit& wpe, const std::int32_t* tokens, const float* dout,
                        int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  const int C = d.C, begin = ctx.at.tp * d.Vl(), end = begin + d.Vl();
  auto s = ctx.compute("embedding", est::Phase::backward, stage, mb);
  float* dw = wte.grad(0);
  float* dp = wpe.grad(0);
  for (int n = 0; n < d.N(); ++n) {
    const float* g = dout + static_cast<std::size_t>(n) * C;
    float* pr = dp + static_cast<std::size_t>(n % d.T) * C;
    for (int c = 0; c < C; ++c) pr[c] += g[c];
    const int tok = tokens[n];
    if (tok < begin || tok >= end) continue;
    float* wr = dw + static_cast<std::size_t>(tok - begin) * C;
    for (int c = 0; c < C; ++c) wr[c] += g[c];
  }
}

double head_forward(RankContext& ctx, ParamUnit& norm, ParamUnit& weight, const float* x, const std::int32_t* targets,
                    HeadActs& a, int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  const int N = d.N(), C = d.C, Vl = d.Vl(), begin = ctx.at.tp * Vl;
  const int valid = std::clamp(d.V - begin, 0, Vl);  // columns past the real vocabulary are padding
  auto& m = ctx.memory;
  a.lnf = TrackedBuffer(&m, MemoryCategory::activations, static_cast<std::size_t>(N) * C);
  a.mean = TrackedBuffer(&m, MemoryCategory::activations, static_cast<std::size_t>(N));
  a.rstd = TrackedBuffer(&m, MemoryCategory::activations, static_cast<std::size_t>(N));
  a.probs = TrackedBuffer(&m, MemoryCategory::activations, static_cast<std::size_t>(N) * Vl);
  {
    auto s = ctx.compute("lnf", est::Phase::forward, stage, mb);
    kc::layernorm_forward(a.lnf.data(), a.mean.data(), a.rstd.data(), x, norm.param(0), norm.param(1), N, C);
  }
  {
    auto s = ctx.compute("lm_head", est::Phase::forward, stage, mb, 2.0 * N * C * Vl);
    kc::matmul_forward(a.probs.data(), a.lnf.data(), weight.param(0), nullptr, N, C, Vl);
  }
  // Row maxima of this rank's columns, gathered from all TP ranks (the all-reduce-max of Megatron).
  std::vector<float> local_max(static_cast<std::size_t>(N)), maxima(static_cast<std::size_t>(N) * ctx.cfg.tp);
  std::vector<float> sums(2 * static_cast<std::size_t>(N), 0.0f);  // [sum exp | target logit - max]
  for (int n = 0; n < N; ++n) {
    const float* row = a.probs.data() + static_cast<std::size_t>(n) * Vl;
    float mx = -std::numeric_limits<float>::infinity();
    for (int v = 0; v < valid; ++v) mx = std::max(mx, row[v]);
    local_max[static_cast<std::size_t>(n)] = mx;
  }
  ctx.all_gather(*ctx.tp, local_max.data(), maxima.data(), local_max.size(), "tp.all_gather", est::Phase::forward, stage, mb);
  {
    auto s = ctx.compute("cross_entropy", est::Phase::forward, stage, mb);
    for (int n = 0; n < N; ++n) {
      float mx = -std::numeric_limits<float>::infinity();
      for (int t = 0; t < ctx.cfg.tp; ++t) mx = std::max(mx, maxima[static_cast<std::size_t>(t) * N + n]);
      float* row = a.probs.data() + static_cast<std::size_t>(n) * Vl;
      const int target = targets[n] - begin;
      if (target >= 0 && target < valid) sums[static_cast<std::size_t>(N + n)] = row[target] - mx;
      float sum = 0;
      for (int v = 0; v < Vl; ++v) {
        row[v] = v < valid ? std::exp(row[v] - mx) : 0.0f;
        sum += row[v];
      }
      sums[static_cast<std::size_t>(n)] = sum;
    }
  }
  ctx.all_reduce(*ctx.tp, sums.data(), sums.size(), "tp.all_reduce", est::Phase::forward, stage, mb);
  auto s = ctx.compute("cross_entropy", est::Phase::forward, stage, mb);
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    const float total = sums[static_cast<std::size_t>(n)];
    loss += std::log(static_cast<double>(total)) - sums[static_cast<std::size_t>(N + n)];
    float* row = a.probs.data() + static_cast<std::size_t>(n) * Vl;
    for (int v = 0; v < Vl; ++v) row[v] /= total;
  }
  return loss / N;
}

void head_backward(RankContext& ctx, ParamUnit& norm, ParamUnit& weight, const float* x, const std::int32_t* targets,
                   HeadActs& a, float loss_scale, float* dx, int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  const int N = d.N(), C = d.C, Vl = d.Vl(), begin = ctx.at.tp * Vl;
  const est::Phase ph = est::Phase::backward;
  TrackedBuffer dlnf(&ctx.memory, MemoryCategory::activations, static_cast<std::size_t>(N) * C);
  {
    // d loss / d logits = (softmax - onehot(target)) per token, in place over the probabilities.
    auto s = ctx.compute("cross_entropy", ph, stage, mb);
    for (int n = 0; n < N; ++n) {
      float* row = a.probs.data() + static_cast<std::size_t>(n) * Vl;
      const int target = targets[n] - begin;
      if (target >= 0 && target < Vl) row[target] -= 1.0f;
      for (int v = 0; v < Vl; ++v) row[v] *= loss_scale;
    }
  }
  {
    auto s = ctx.compute("lm_head", ph, stage, mb, 4.0 * N * C * Vl);
    kc::matmul_backward(dlnf.data(), weight.grad(0), nullptr, a.probs.data(), a.lnf.data(), weight.param(0), N, C, Vl);
  }
  ctx.all_reduce(*ctx.tp, dlnf.data(), dlnf.size(), "tp.all_reduce", ph, stage, mb);
  std::memset(dx, 0, static_cast<std::size_t>(N) * C * sizeof(float));
  auto s = ctx.compute("lnf", ph, stage, mb);
  kc::layernorm_backward(dx, norm.grad(0), norm.grad(1), dlnf.data(), x, norm.param(0), a.mean.data(), a.rstd.data(), N, C);
}

}  // namespace plansight::probe
