// TransformerBlock: the layer's forward and backward from the CPU kernels, with the two TP
// all-reduces of each direction and recomputation. Row-parallel biases are added once, after
// the all-reduce, so every TP rank holds them whole and computes the same gradient for them.
#include "transformer_block.h"

#include <cmath>
#include <cstring>
#include <string>

#include "plansight/kernels/kernels.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
namespace kc = plansight::kernels::cpu;
using runtime::MemoryCategory;
using runtime::TrackedBuffer;

TrackedBuffer acts(runtime::MemoryTracker& m, std::size_t n) { return TrackedBuffer(&m, MemoryCategory::activations, n); }
double gemm_flops(int n, int in, int out) { return 2.0 * n * in * out; }

// out = base + out + bias (bias may be null): the residual add after a row-parallel GEMM.
void add_residual_bias(float* out, const float* base, const float* bias, int N, int C) {
  for (int n = 0; n < N; ++n) {
    float* row = out + static_cast<std::size_t>(n) * C;
    const float* b = base + static_cast<std::size_t>(n) * C;
    for (int c = 0; c < C; ++c) row[c] += b[c] + (bias ? bias[c] : 0.0f);
  }
}

void bias_backward(float* dbias, const float* dout, int N, int C) {
  if (!dbias) return;
  for (int n = 0; n < N; ++n) {
    const float* row = dout + static_cast<std::size_t>(n) * C;
    for (int c = 0; c < C; ++c) dbias[c] += row[c];
  }
}

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

void LayerActs::allocate_internals(runtime::MemoryTracker& m, const Dims& d) {
  const auto N = static_cast<std::size_t>(d.N());
  if (ln1.empty()) {
    ln1 = acts(m, N * d.C);
    mean1 = acts(m, N);
    rstd1 = acts(m, N);
    qkv = acts(m, N * 3 * d.Cl());
    atty = acts(m, N * d.Cl());
    x2 = acts(m, N * d.C);
    ln2 = acts(m, N * d.C);
    mean2 = acts(m, N);
    rstd2 = acts(m, N);
    fch = acts(m, N * d.Fl());
    fchg = acts(m, N * d.Fl());
  }
  if (att.empty()) att = acts(m, static_cast<std::size_t>(d.B) * d.NHl() * d.T * d.T);
  if (out.empty()) out = acts(m, N * d.C);
}

void LayerActs::free_internals() {
  for (TrackedBuffer* b : {&ln1, &mean1, &rstd1, &qkv, &att, &atty, &x2, &ln2, &mean2, &rstd2, &fch, &fchg}) b->reset();
}

TransformerBlock::TransformerBlock(RankContext& ctx, int layer, int stage)
    : ctx_(ctx), layer_(layer), stage_(stage),
      unit_(ctx, "h." + std::to_string(layer), layer_tensors(ctx.cfg.dims, layer, static_cast<int>(ctx.cfg.request.model.layers), ix_), stage, false) {}

void TransformerBlock::forward(const float* x, LayerActs& a, est::Phase phase, int mb) {
  const Dims& d = ctx_.cfg.dims;
  const int N = d.N(), C = d.C, Cl = d.Cl(), Fl = d.Fl();
  a.allocate_internals(ctx_.memory, d);
  ParamUnit& u = unit_;
  {
    auto s = ctx_.compute("ln1", phase, stage_, mb);
    kc::layernorm_forward(a.ln1.data(), a.mean1.data(), a.rstd1.data(), x, u.param(ix_.ln1_w), u.param(ix_.ln1_b), N, C);
  }
  {
    auto s = ctx_.compute("qkv", phase, stage_, mb, gemm_flops(N, C, 3 * Cl));
    kc::matmul_forward(a.qkv.data(), a.ln1.data(), u.param(ix_.qkv_w), u.param(ix_.qkv_b), N, C, 3 * Cl);
  }
  {
    // Q K^T and A V: 2 * 2 * B * T * T * Cl FLOPs (full squares, as the estimator counts them).
    auto s = ctx_.compute("attention", phase, stage_, mb, 4.0 * d.B * d.T * d.T * Cl);
    kc::attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), d.B, d.T, Cl, d.NHl());
  }
  {
    auto s = ctx_.compute("proj", phase, stage_, mb, gemm_flops(N, Cl, C));
    kc::matmul_forward(a.x2.data(), a.atty.data(), u.param(ix_.proj_w), nullptr, N, Cl, C);
  }
  ctx_.all_reduce(*ctx_.tp, a.x2.data(), a.x2.size(), "tp.all_reduce", phase, stage_, mb);
  {
    auto s = ctx_.compute("residual", phase, stage_, mb);
    add_residual_bias(a.x2.data(), x, u.param(ix_.proj_b), N, C);
  }
  {
    auto s = ctx_.compute("ln2", phase, stage_, mb);
    kc::layernorm_forward(a.ln2.data(), a.mean2.data(), a.rstd2.data(), a.x2.data(), u.param(ix_.ln2_w), u.param(ix_.ln2_b), N, C);
  }
  {
    auto s = ctx_.compute("fc1", phase, stage_, mb, gemm_flops(N, C, Fl));
    kc::matmul_forward(a.fch.data(), a.ln2.data(), u.param(ix_.fc_w), u.param(ix_.fc_b), N, C, Fl);
  }
  {
    auto s = ctx_.compute("gelu", phase, stage_, mb);
    kc::gelu_forward(a.fchg.data(), a.fch.data(), a.fch.size());
  }
  {
    auto s = ctx_.compute("fc2", phase, stage_, mb, gemm_flops(N, Fl, C));
    kc::matmul_forward(a.out.data(), a.fchg.data(), u.param(ix_.fc2_w), nullptr, N, Fl, C);
  }
  ctx_.all_reduce(*ctx_.tp, a.out.data(), a.out.size(), "tp.all_reduce", phase, stage_, mb);
  {
    auto s = ctx_.compute("residual", phase, stage_, mb);
    add_residual_bias(a.out.data(), a.x2.data(), u.param(ix_.fc2_b), N, C);
  }
}

void TransformerBlock::trim(LayerActs& a) const {
  if (ctx_.cfg.recompute == est::Recompute::full) a.free_internals();
  else if (ctx_.cfg.recompute == est::Recompute::selective) a.att.reset();
}

void TransformerBlock::restore(const float* x, LayerActs& a, int mb) {
  const Dims& d = ctx_.cfg.dims;
  if (ctx_.cfg.recompute == est::Recompute::full) {
    forward(x, a, est::Phase::recompute, mb);  // rewrites `out` with the same values
  } else if (ctx_.cfg.recompute == est::Recompute::selective) {
    a.allocate_internals(ctx_.memory, d);
    auto s = ctx_.compute("attention", est::Phase::recompute, stage_, mb, 4.0 * d.B * d.T * d.T * d.Cl());
    kc::attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), d.B, d.T, d.Cl(), d.NHl());
  }
}

void TransformerBlock::backward(const float* x, const float* dout, float* dx, LayerActs& a, int mb) {
  const Dims& d = ctx_.cfg.dims;
  const int N = d.N(), C = d.C, Cl = d.Cl(), Fl = d.Fl();
  const auto n = static_cast<std::size_t>(N);
  const est::Phase ph = est::Phase::backward;
  ParamUnit& u = unit_;
  runtime::MemoryTracker& m = ctx_.memory;
  TrackedBuffer dx2 = acts(m, n * C), dfchg = acts(m, n * Fl), dfch = acts(m, n * Fl), dln = acts(m, n * C);
  std::memcpy(dx2.data(), dout, n * C * sizeof(float));  // the residual passes dout through
  {
    auto s = ctx_.compute("fc2", ph, stage_, mb, 2 * gemm_flops(N, Fl, C));
    bias_backward(u.grad(ix_.fc2_b), dout, N, C);
    kc::matmul_backward(dfchg.data(), u.grad(ix_.fc2_w), nullptr, dout, a.fchg.data(), u.param(ix_.fc2_w), N, Fl, C);
  }
  {
    auto s = ctx_.compute("gelu", ph, stage_, mb);
    kc::gelu_backward(dfch.data(), a.fch.data(), dfchg.data(), dfch.size());
  }
  {
    auto s = ctx_.compute("fc1", ph, stage_, mb, 2 * gemm_flops(N, C, Fl));
    kc::matmul_backward(dln.data(), u.grad(ix_.fc_w), u.grad(ix_.fc_b), dfch.data(), a.ln2.data(), u.param(ix_.fc_w), N, C, Fl);
  }
  dfchg.reset();
  dfch.reset();
  ctx_.all_reduce(*ctx_.tp, dln.data(), dln.size(), "tp.all_reduce", ph, stage_, mb);
  {
    auto s = ctx_.compute("ln2", ph, stage_, mb);
    kc::layernorm_backward(dx2.data(), u.grad(ix_.ln2_w), u.grad(ix_.ln2_b), dln.data(), a.x2.data(), u.param(ix_.ln2_w),
                           a.mean2.data(), a.rstd2.data(), N, C);
  }
  TrackedBuffer datty = acts(m, n * Cl), dqkv = acts(m, n * 3 * Cl);
  {
    auto s = ctx_.compute("proj", ph, stage_, mb, 2 * gemm_flops(N, Cl, C));
    bias_backward(u.grad(ix_.proj_b), dx2.data(), N, C);
    kc::matmul_backward(datty.data(), u.grad(ix_.proj_w), nullptr, dx2.data(), a.atty.data(), u.param(ix_.proj_w), N, Cl, C);
  }
  {
    TrackedBuffer scratch = acts(m, a.att.size());
    auto s = ctx_.compute("attention", ph, stage_, mb, 8.0 * d.B * d.T * d.T * Cl);
    kc::attention_backward(dqkv.data(), scratch.data(), datty.data(), a.qkv.data(), a.att.data(), d.B, d.T, Cl, d.NHl());
  }
  dln.zero();
  {
    auto s = ctx_.compute("qkv", ph, stage_, mb, 2 * gemm_flops(N, C, 3 * Cl));
    kc::matmul_backward(dln.data(), u.grad(ix_.qkv_w), u.grad(ix_.qkv_b), dqkv.data(), a.ln1.data(), u.param(ix_.qkv_w), N, C, 3 * Cl);
  }
  ctx_.all_reduce(*ctx_.tp, dln.data(), dln.size(), "tp.all_reduce", ph, stage_, mb);
  std::memcpy(dx, dx2.data(), n * C * sizeof(float));
  {
    auto s = ctx_.compute("ln1", ph, stage_, mb);
    kc::layernorm_backward(dx, u.grad(ix_.ln1_w), u.grad(ix_.ln1_b), dln.data(), x, u.param(ix_.ln1_w), a.mean1.data(),
                           a.rstd1.data(), N, C);
  }
}

}  // namespace plansight::probe
