// TransformerBlock: the layer's forward and backward on the rank's backend, with the two TP
// all-reduces of each direction and recomputation. Row-parallel biases are added once, after
// the all-reduce, so every TP rank holds them whole and computes the same gradient for them.
#include "transformer_block.h"

#include <cmath>
#include <cstring>
#include <string>


namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
using runtime::MemoryCategory;

double gemm_flops(int n, int in, int out) { return 2.0 * n * in * out; }

}  // namespace

std::vector<TensorDesc> layer_tensors(const Dims& d, int layer, int layers, LayerIndex& ix) {
  const std::string p = "h." + std::to_string(layer) + ".";
  const float residual_std = 0.02f / std::sqrt(2.0f * static_cast<float>(layers));
  std::vector<TensorDesc> t;
  auto add = [&](int& index, std::string name, int rows, int cols, Split split, Init init, float stddev = 0.02f) {
    index = static_cast<int>(t.size());
    TensorDesc desc;
    desc.name = p + name;
    desc.rows = rows;
    desc.cols = cols;
    desc.split = split;
    desc.init = init;
    desc.stddev = stddev;
    t.push_back(std::move(desc));
  };
  add(ix.ln1_w, "ln1.w", d.C, 1, Split::none, Init::ones);
  add(ix.ln1_b, "ln1.b", d.C, 1, Split::none, Init::zeros);
  add(ix.qkv_w, "attn.qkv.w", 3 * d.C, d.C, Split::rows_qkv, Init::normal);
  if (d.qkv_bias) add(ix.qkv_b, "attn.qkv.b", 3 * d.C, 1, Split::rows_qkv, Init::zeros);
  add(ix.proj_w, "attn.proj.w", d.C, d.C, Split::cols, Init::normal, residual_std);
  if (d.proj_bias) add(ix.proj_b, "attn.proj.b", d.C, 1, Split::none, Init::zeros);
  add(ix.ln2_w, "ln2.w", d.C, 1, Split::none, Init::ones);
  add(ix.ln2_b, "ln2.b", d.C, 1, Split::none, Init::zeros);
  add(ix.fc_w, "mlp.fc.w", d.F, d.C, Split::rows, Init::normal);
  if (d.mlp_bias) add(ix.fc_b, "mlp.fc.b", d.F, 1, Split::rows, Init::zeros);
  add(ix.fc2_w, "mlp.fc2.w", d.C, d.F, Split::cols, Init::normal, residual_std);
  if (d.mlp_bias) add(ix.fc2_b, "mlp.fc2.b", d.C, 1, Split::none, Init::zeros);
  return t;
}

void LayerActs::allocate_internals(Backend& be, const Dims& d) {
  const auto N = static_cast<std::size_t>(d.N());
  const Elem e = be.act();
  // Unfilled: forward() writes each whole before reading it (LayerNorm's out, mean and rstd; the
  // GEMMs' outputs with beta 0; attention's out and its T x T probabilities, zeros above the
  // diagonal included; GeLU's out), and a recomputation writes them again the same way.
  auto acts = [&](std::size_t n, Elem elem) { return Buf(be, MemoryCategory::activations, n, elem, Fill::none); };
  if (ln1.empty()) {
    ln1 = acts(N * d.C, e);
    mean1 = acts(N, Elem::f32);
    rstd1 = acts(N, Elem::f32);
    qkv = acts(N * 3 * d.Cl(), e);
    atty = acts(N * d.Cl(), e);
    x2 = acts(N * d.C, e);
    ln2 = acts(N * d.C, e);
    mean2 = acts(N, Elem::f32);
    rstd2 = acts(N, Elem::f32);
    fch = acts(N * d.Fl(), e);
    fchg = acts(N * d.Fl(), e);
  }
  if (att.empty()) att = acts(static_cast<std::size_t>(d.B) * d.NHl() * d.T * d.T, e);
  if (out.empty()) out = acts(N * d.C, e);
}

void LayerActs::free_internals() {
  for (Buf* b : {&ln1, &mean1, &rstd1, &qkv, &att, &atty, &x2, &ln2, &mean2, &rstd2, &fch, &fchg}) b->reset();
}

TransformerBlock::TransformerBlock(RankContext& ctx, int layer, int stage)
    : ctx_(ctx), layer_(layer), stage_(stage),
      unit_(ctx, "h." + std::to_string(layer), layer_tensors(ctx.cfg.dims, layer, static_cast<int>(ctx.cfg.request.model.layers), ix_), stage, false) {}

void TransformerBlock::forward(const void* x, LayerActs& a, est::Phase phase, int mb) {
  const Dims& d = ctx_.cfg.dims;
  const int N = d.N(), C = d.C, Cl = d.Cl(), Fl = d.Fl();
  Backend& be = ctx_.be;
  const Elem e = be.act();
  a.allocate_internals(be, d);
  ParamUnit& u = unit_;
  {
    auto s = ctx_.compute("ln1", phase, stage_, mb);
    be.layernorm_forward(a.ln1.data(), a.mean1.f32(), a.rstd1.f32(), x, u.param(ix_.ln1_w), u.param(ix_.ln1_b), N, C);
  }
  {
    auto s = ctx_.compute("qkv", phase, stage_, mb, gemm_flops(N, C, 3 * Cl));
    be.matmul_forward(a.qkv.data(), a.ln1.data(), u.param(ix_.qkv_w), u.param(ix_.qkv_b), N, C, 3 * Cl);
  }
  {
    // Q K^T and A V: 2 * 2 * B * T * T * Cl FLOPs (full squares, as the estimator counts them).
    auto s = ctx_.compute("attention", phase, stage_, mb, 4.0 * d.B * d.T * d.T * Cl);
    be.attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), d.B, d.T, Cl, d.NHl());
  }
  {
    auto s = ctx_.compute("proj", phase, stage_, mb, gemm_flops(N, Cl, C));
    be.matmul_forward(a.x2.data(), a.atty.data(), u.param(ix_.proj_w), nullptr, N, Cl, C);
  }
  ctx_.all_reduce(*ctx_.tp, a.x2.data(), a.x2.size(), e, "tp.all_reduce", phase, stage_, mb);
  {
    auto s = ctx_.compute("residual", phase, stage_, mb);
    be.residual_bias(a.x2.data(), x, u.param(ix_.proj_b), N, C);
  }
  {
    auto s = ctx_.compute("ln2", phase, stage_, mb);
    be.layernorm_forward(a.ln2.data(), a.mean2.f32(), a.rstd2.f32(), a.x2.data(), u.param(ix_.ln2_w), u.param(ix_.ln2_b), N, C);
  }
  {
    auto s = ctx_.compute("fc1", phase, stage_, mb, gemm_flops(N, C, Fl));
    be.matmul_forward(a.fch.data(), a.ln2.data(), u.param(ix_.fc_w), u.param(ix_.fc_b), N, C, Fl);
  }
  {
    auto s = ctx_.compute("gelu", phase, stage_, mb);
    be.gelu_forward(a.fchg.data(), a.fch.data(), a.fch.size());
  }
  {
    auto s = ctx_.compute("fc2", phase, stage_, mb, gemm_flops(N, Fl, C));
    be.matmul_forward(a.out.data(), a.fchg.data(), u.param(ix_.fc2_w), nullptr, N, Fl, C);
  }
  ctx_.all_reduce(*ctx_.tp, a.out.data(), a.out.size(), e, "tp.all_reduce", phase, stage_, mb);
  {
    auto s = ctx_.compute("residual", phase, stage_, mb);
    be.residual_bias(a.out.data(), a.x2.data(), u.param(ix_.fc2_b), N, C);
  }
}

void TransformerBlock::trim(LayerActs& a) const {
  if (ctx_.cfg.recompute == est::Recompute::full) a.free_internals();
  else if (ctx_.cfg.recompute == est::Recompute::selective) a.att.reset();
}

void TransformerBlock::restore(const void* x, LayerActs& a, int mb) {
  const Dims& d = ctx_.cfg.dims;
  if (ctx_.cfg.recompute == est::Recompute::full) {
    forward(x, a, est::Phase::recompute, mb);  // rewrites `out` with the same values
  } else if (ctx_.cfg.recompute == est::Recompute::selective) {
    a.allocate_internals(ctx_.be, d);
    auto s = ctx_.compute("attention", est::Phase::recompute, stage_, mb, 4.0 * d.B * d.T * d.T * d.Cl());
    ctx_.be.attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), d.B, d.T, d.Cl(), d.NHl());
  }
}

void TransformerBlock::backward(const void* x, const void* dout, void* dx, LayerActs& a, int mb) {
  const Dims& d = ctx_.cfg.dims;
  const int N = d.N(), C = d.C, Cl = d.Cl(), Fl = d.Fl();
  const auto n = static_cast<std::size_t>(N);
  const est::Phase ph = est::Phase::backward;
  ParamUnit& u = unit_;
  Backend& be = ctx_.be;
  const Elem e = be.act();
  // Unfilled: what its first writer fills whole (a copy, or a GEMM's or GeLU's input gradient
  // written with Gradient::overwrite), so no memset launch. Zeroed: attention's dqkv, which its
  // kernels accumulate into.
  constexpr auto overwrite = kernels::Gradient::overwrite;
  auto zeroed = [&](std::size_t count) { return Buf(be, MemoryCategory::activations, count, e); };
  auto overwritten = [&](std::size_t count) { return Buf(be, MemoryCategory::activations, count, e, Fill::none); };
  Buf dx2 = overwritten(n * C), dfchg = overwritten(n * Fl), dfch = overwritten(n * Fl), dln = overwritten(n * C);
  be.copy(dx2.data(), dout, dx2.bytes(), Queue::compute);  // the residual passes dout through
  {
    auto s = ctx_.compute("fc2", ph, stage_, mb, 2 * gemm_flops(N, Fl, C));
    be.bias_backward(u.grad(ix_.fc2_b), dout, N, C);
    be.matmul_backward(dfchg.data(), u.grad(ix_.fc2_w), nullptr, dout, a.fchg.data(), u.param(ix_.fc2_w), N, Fl, C,
                       overwrite);
  }
  {
    auto s = ctx_.compute("gelu", ph, stage_, mb);
    be.gelu_backward(dfch.data(), a.fch.data(), dfchg.data(), dfch.size(), overwrite);
  }
  {
    auto s = ctx_.compute("fc1", ph, stage_, mb, 2 * gemm_flops(N, C, Fl));
    be.matmul_backward(dln.data(), u.grad(ix_.fc_w), u.grad(ix_.fc_b), dfch.data(), a.ln2.data(), u.param(ix_.fc_w), N, C, Fl,
                       overwrite);
  }
  dfchg.reset();
  dfch.reset();
  ctx_.all_reduce(*ctx_.tp, dln.data(), dln.size(), e, "tp.all_reduce", ph, stage_, mb);
  {
    auto s = ctx_.compute("ln2", ph, stage_, mb);
    be.layernorm_backward(dx2.data(), u.grad(ix_.ln2_w), u.grad(ix_.ln2_b), dln.data(), a.x2.data(), u.param(ix_.ln2_w),
                          a.mean2.f32(), a.rstd2.f32(), N, C);
  }
  Buf datty = overwritten(n * Cl), dqkv = zeroed(n * 3 * Cl);
  {
    auto s = ctx_.compute("proj", ph, stage_, mb, 2 * gemm_flops(N, Cl, C));
    be.bias_backward(u.grad(ix_.proj_b), dx2.data(), N, C);
    be.matmul_backward(datty.data(), u.grad(ix_.proj_w), nullptr, dx2.data(), a.atty.data(), u.param(ix_.proj_w), N, Cl, C,
                       overwrite);
  }
  {
    Buf scratch = overwritten(a.att.size());  // the gradient of att: a beta-0 GEMM's output, then rewritten whole
    auto s = ctx_.compute("attention", ph, stage_, mb, 8.0 * d.B * d.T * d.T * Cl);
    be.attention_backward(dqkv.data(), scratch.data(), datty.data(), a.qkv.data(), a.att.data(), d.B, d.T, Cl, d.NHl());
  }
  {
    auto s = ctx_.compute("qkv", ph, stage_, mb, 2 * gemm_flops(N, C, 3 * Cl));
    be.matmul_backward(dln.data(), u.grad(ix_.qkv_w), u.grad(ix_.qkv_b), dqkv.data(), a.ln1.data(), u.param(ix_.qkv_w), N, C,
                       3 * Cl, overwrite);
  }
  ctx_.all_reduce(*ctx_.tp, dln.data(), dln.size(), e, "tp.all_reduce", ph, stage_, mb);
  be.copy(dx, dx2.data(), dx2.bytes(), Queue::compute);
  {
    auto s = ctx_.compute("ln1", ph, stage_, mb);
    be.layernorm_backward(dx, u.grad(ix_.ln1_w), u.grad(ix_.ln1_b), dln.data(), x, u.param(ix_.ln1_w), a.mean1.f32(),
                          a.rstd1.f32(), N, C);
  }
}

}  // namespace plansight::probe
