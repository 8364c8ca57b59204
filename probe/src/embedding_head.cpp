// Embedding and head of the probe on the rank's backend: the vocabulary-parallel lookup and
// cross-entropy are backend operations of their own (the kernels' encoder and softmax assume the
// whole vocabulary), with the TP collectives between their steps.
#include "embedding_head.h"

#include <algorithm>

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
using runtime::MemoryCategory;

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

void embedding_forward(RankContext& ctx, ParamUnit& wte, ParamUnit& wpe, const std::int32_t* tokens, void* out,
                       int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  {
    auto s = ctx.compute("embedding", est::Phase::forward, stage, mb);
    ctx.be.embedding_lookup(out, tokens, wte.param(0), ctx.at.tp * d.Vl(), d.Vl(), d.N(), d.C);
  }
  ctx.all_reduce(*ctx.tp, out, static_cast<std::size_t>(d.N()) * d.C, ctx.be.act(), "tp.all_reduce", est::Phase::forward, stage, mb);
  auto s = ctx.compute("embedding", est::Phase::forward, stage, mb);
  ctx.be.add_positions(out, wpe.param(0), d.N(), d.T, d.C);
}

void embedding_backward(RankContext& ctx, ParamUnit& wte, ParamUnit& wpe, const std::int32_t* tokens, const void* dout,
                        int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  auto s = ctx.compute("embedding", est::Phase::backward, stage, mb);
  ctx.be.embedding_backward(wte.grad(0), wpe.grad(0), dout, tokens, ctx.at.tp * d.Vl(), d.Vl(), d.N(), d.T, d.C);
}

void head_forward(RankContext& ctx, ParamUnit& norm, ParamUnit& weight, const void* x, const std::int32_t* targets,
                  HeadActs& a, int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  const int N = d.N(), C = d.C, Vl = d.Vl(), begin = ctx.at.tp * Vl;
  const int valid = std::clamp(d.V - begin, 0, Vl);  // columns past the real vocabulary are padding
  Backend& be = ctx.be;
  const auto n = static_cast<std::size_t>(N);
  // Unfilled: LayerNorm writes lnf, mean and rstd whole, the head's beta-0 GEMM every logit.
  a.lnf = Buf(be, MemoryCategory::activations, n * C, be.act(), Fill::none);
  a.mean = Buf(be, MemoryCategory::activations, n, Elem::f32, Fill::none);
  a.rstd = Buf(be, MemoryCategory::activations, n, Elem::f32, Fill::none);
  a.probs = Buf(be, MemoryCategory::activations, n * Vl, be.act(), Fill::none);
  {
    auto s = ctx.compute("lnf", est::Phase::forward, stage, mb);
    be.layernorm_forward(a.lnf.data(), a.mean.f32(), a.rstd.f32(), x, norm.param(0), norm.param(1), N, C);
  }
  {
    auto s = ctx.compute("lm_head", est::Phase::forward, stage, mb, 2.0 * N * C * Vl);
    be.matmul_forward(a.probs.data(), a.lnf.data(), weight.param(0), nullptr, N, C, Vl);
  }
  // Row maxima of this rank's columns, gathered from all TP ranks (the all-reduce-max of
  // Megatron), then [sum exp | target logit - max] all-reduced. Per-token statistics of the
  // head's forward, counted with its activations as the LayerNorm's mean and rstd are. Unfilled:
  // ce_row_max writes every row's maximum, the all-gather all tp blocks, ce_exp both halves of sums.
  Buf local_max(be, MemoryCategory::activations, n, Elem::f32, Fill::none);
  Buf maxima(be, MemoryCategory::activations, n * ctx.cfg.tp, Elem::f32, Fill::none);
  Buf sums(be, MemoryCategory::activations, 2 * n, Elem::f32, Fill::none);
  {
    // A phase of its own like every kernel of the head (untimed, it was "other" time on a GPU).
    auto s = ctx.compute("cross_entropy", est::Phase::forward, stage, mb);
    be.ce_row_max(local_max.f32(), a.probs.data(), N, Vl, valid);
  }
  ctx.all_gather(*ctx.tp, local_max.data(), maxima.data(), n, Elem::f32, "tp.all_gather", est::Phase::forward, stage, mb);
  {
    auto s = ctx.compute("cross_entropy", est::Phase::forward, stage, mb);
    be.ce_exp(a.probs.data(), sums.f32(), maxima.f32(), ctx.cfg.tp, targets, begin, N, Vl, valid);
  }
  ctx.all_reduce(*ctx.tp, sums.data(), sums.size(), Elem::f32, "tp.all_reduce", est::Phase::forward, stage, mb);
  auto s = ctx.compute("cross_entropy", est::Phase::forward, stage, mb);
  be.ce_normalize(a.probs.data(), sums.f32(), maxima.f32(), ctx.cfg.tp, N, Vl, valid);
}

void head_backward(RankContext& ctx, ParamUnit& norm, ParamUnit& weight, const void* x, const std::int32_t* targets,
                   HeadActs& a, float loss_scale, void* dx, int stage, int mb) {
  const Dims& d = ctx.cfg.dims;
  const int N = d.N(), C = d.C, Vl = d.Vl(), begin = ctx.at.tp * Vl;
  const est::Phase ph = est::Phase::backward;
  Backend& be = ctx.be;
  // Unfilled: matmul_backward writes it whole (Gradient::overwrite), so no memset launch.
  Buf dlnf(be, MemoryCategory::activations, static_cast<std::size_t>(N) * C, be.act(), Fill::none);
  {
    // d loss / d logits = (softmax - onehot(target)) per token, in place over the probabilities.
    auto s = ctx.compute("cross_entropy", ph, stage, mb);
    be.ce_backward(a.probs.data(), targets, begin, N, Vl, loss_scale);
  }
  {
    auto s = ctx.compute("lm_head", ph, stage, mb, 4.0 * N * C * Vl);
    be.matmul_backward(dlnf.data(), weight.grad(0), nullptr, a.probs.data(), a.lnf.data(), weight.param(0), N, C, Vl,
                       kernels::Gradient::overwrite);
  }
  ctx.all_reduce(*ctx.tp, dlnf.data(), dlnf.size(), be.act(), "tp.all_reduce", ph, stage, mb);
  be.zero(dx, dlnf.bytes(), Queue::compute);
  auto s = ctx.compute("lnf", ph, stage, mb);
  be.layernorm_backward(dx, norm.grad(0), norm.grad(1), dlnf.data(), x, norm.param(0), a.mean.f32(), a.rstd.f32(), N, C);
}

}  // namespace plansight::probe
