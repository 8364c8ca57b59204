// Kernel-by-kernel cost of a Megatron-LM transformer layer on one GPU, for one micro-batch of
// T = b * s / cp tokens. Shapes per TP rank (Shoeybi et al. 2019, Sec. 3): QKV and the first MLP
// GEMM are column-parallel (N split by t), the attention output and second MLP GEMM
// row-parallel (K split by t). A forward GEMM Y[M,N] = X[M,K] W[K,N] costs, in backward, the
// input gradient dX = dY W^T (M x K x N) and the weight gradient dW = X^T dY (K x N x M).
// Element-wise kernels are memory bound (unless a measured profile says otherwise); their bytes
// follow the tensors Korthikanti et al. 2022 Sec. 4 lists (norm inputs, dropout masks, activation
// inputs), divided by t with sequence parallelism. layer_costs.cpp sums these operators and adds
// the communication; the enumeration order here is the order of that sum.
#include "plansight/estimator/operator_costs.h"

#include <algorithm>

#include "layer_dims.h"
#include "operator_emitter.h"

namespace plansight::estimator {
namespace {

using namespace operators;

// Flash and fused attention read Q, K, V (and, backward, O, dO and the softmax statistics) and
// write O (backward: dQ, dK, dV) once each: their compulsory HBM traffic (Dao 2023, Algorithms 1
// and 2: the s x s scores stay on chip). Real kernels re-read K and V tiles per block of queries,
// mostly from L2; this is the traffic a roofline counts. Widths per TP rank: GQA queries and
// outputs q, keys and values k; MLA queries and keys of the qk width (d.k), values and outputs of
// the v width (d.q).
double attention_bytes(const LayerDims& d, bool mla, bool backward) {
  const double q_in = d.T * (mla ? d.k : d.q) / d.t, out = d.T * d.q / d.t;
  const double keys = d.b * d.skv * d.k / d.t, values = d.b * d.skv * (mla ? d.q : d.k) / d.t;
  const double stats = d.T * d.heads / d.t * 4;  // fp32 log-sum-exp per query row and head
  if (!backward) return (q_in + keys + values + out) * d.e + stats;
  return (2 * q_in + 2 * keys + 2 * values + 2 * out) * d.e + stats;  // read Q, K, V, O, dO; write dQ, dK, dV
}

// The attention core: scores, softmax, dropout and the weighted sum of values.
void attention_core(const LayerDims& d, bool mla, const DeviceModel& dev, Emitter& out) {
  const double heads = d.heads / d.t;
  const double batch = d.b * heads;
  if (d.flash) {
    // FlashAttention skips fully masked blocks, so causal attention does about half the work;
    // its backward recomputes the scores: 2.5x the forward FLOPs (Dao 2023, Sec. 3.1).
    const double fwd = 4 * d.sq * d.skv * d.d * batch * (d.causal ? 0.5 : 1.0);
    out.attention("flash attention", OperatorPass::forward, step::kScores, fwd, attention_bytes(d, mla, false),
                  dev.flash_attention_seconds(fwd, false));
    out.attention("flash attention", OperatorPass::backward_input, step::kScores, 2.5 * fwd, attention_bytes(d, mla, true),
                  dev.flash_attention_seconds(2.5 * fwd, true));
    return;
  }
  if (dev.has_fused_attention()) {
    // The device ran attention as one measured kernel (the CPU probe's fused loops): its own
    // time; the FLOPs stay those of the unfused products, the work the model counts.
    out.attention("fused attention", OperatorPass::forward, step::kScores, 4 * d.sq * d.skv * d.d * batch,
                  attention_bytes(d, mla, false), dev.fused_attention_seconds(batch, d.sq, d.d, false));
    out.attention("fused attention", OperatorPass::backward_input, step::kScores, 8 * d.sq * d.skv * d.d * batch,
                  attention_bytes(d, mla, true), dev.fused_attention_seconds(batch, d.sq, d.d, true));
    return;
  }
  // QK^T and AV as batched GEMMs over b * heads/t; the full s x s product is computed and masked.
  const double product = 2 * d.sq * d.skv * d.d * batch;
  out.add_gemm("scores Q K^T", OperatorPass::forward, step::kScores, d.sq, d.skv, d.d, batch, product);
  out.add_gemm("context P V", OperatorPass::forward, step::kContext, d.sq, d.d, d.skv, batch, product);
  // Backward: dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q.
  out.add_gemm("dP = dO V^T", OperatorPass::backward_input, step::kContext, d.sq, d.skv, d.d, batch, product);
  out.add_gemm("dV = P^T dO", OperatorPass::backward_input, step::kContext, d.skv, d.d, d.sq, batch, product);
  out.add_gemm("dQ = dS K", OperatorPass::backward_input, step::kScores, d.sq, d.d, d.skv, batch, product);
  out.add_gemm("dK = dS^T Q", OperatorPass::backward_input, step::kScores, d.skv, d.d, d.sq, batch, product);
  // Fused scale-mask-softmax (read + write scores) and dropout (read, write output and mask);
  // backward reads probabilities and their gradient and writes the score gradient.
  const double scores = batch * d.sq * d.skv;
  out.elementwise("softmax", step::kSoftmax, kSoftmax, kSoftmaxFlops, scores, scores * 2 * d.e, scores * 3 * d.e);
  if (d.mask > 0) {
    out.elementwise("attention dropout", step::kDropout, kDropout, kDropoutFlops, scores, scores * (2 * d.e + 1),
                    scores * (2 * d.e + 1));
  }
}

// MLA's projections (DeepSeek-V2 Sec. 2.1.2; Megatron-Core MultiLatentAttention): the down
// projections run on every TP rank ("duplicated": plain linear layers, not Transformer Engine's
// column- or row-parallel ones, so no TP collective overlaps them), the up projections and the
// output projection are split over TP like QKV and the attention output.
void mla_gemms(Emitter& out, const LayerDims& d, const MlaSpec& a) {
  const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
  const double qk = static_cast<double>(a.qk_head_dim()), v = static_cast<double>(a.v_head_dim);
  if (a.q_lora_rank > 0) {
    out.duplicated_gemm("q_a_proj", step::kQkv, d.T, ql, d.h);
    out.gemm("q_b_proj", step::kQkv + 0.1, d.T, d.heads * qk / d.t, ql);
  } else {
    out.gemm("q_proj", step::kQkv, d.T, d.heads * qk / d.t, d.h);
  }
  out.duplicated_gemm("kv_a_proj_with_mqa", step::kQkv + 0.2, d.T, kvl + static_cast<double>(a.qk_rope_head_dim), d.h);
  out.gemm("kv_b_proj", step::kQkv + 0.3, d.T, d.heads * (static_cast<double>(a.qk_nope_head_dim) + v) / d.t, kvl);
  out.gemm("o_proj", step::kAttentionOut, d.T, d.h, d.heads * v / d.t, 1, true);
}

ElementFlops norm_flops(const Plan& plan) {
  return plan.model.norm == NormKind::rms_norm ? kRmsNormFlops : kLayerNormFlops;
}

// Collects a list; adds recompute rows and orders it for reading.
class ListSink final : public OperatorSink {
 public:
  void add(const OperatorCost& op) override { ops.push_back(op); }
  std::vector<OperatorCost> ops;
};

int pass_rank(OperatorPass p) {
  switch (p) {
    case OperatorPass::forward: return 0;
    case OperatorPass::recompute: return 1;
    case OperatorPass::backward_input:
    case OperatorPass::backward_weight: return 2;
  }
  return 3;
}

std::vector<OperatorCost> ordered(const Plan& plan, std::vector<OperatorCost> ops, bool with_recompute) {
  if (with_recompute) {
    const std::size_t n = ops.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (ops[i].pass != OperatorPass::forward || !recomputed(plan, ops[i])) continue;
      OperatorCost again = ops[i];
      again.pass = OperatorPass::recompute;
      ops.push_back(again);
    }
  }
  std::stable_sort(ops.begin(), ops.end(), [](const OperatorCost& a, const OperatorCost& b) {
    const int ra = pass_rank(a.pass), rb = pass_rank(b.pass);
    if (ra != rb) return ra < rb;
    return ra == 2 ? a.step > b.step : a.step < b.step;
  });
  return ops;
}

}  // namespace

std::string_view to_string(OperatorClass c) {
  switch (c) {
    case OperatorClass::gemm: return "gemm";
    case OperatorClass::attention: return "attention";
    case OperatorClass::elementwise: return "elementwise";
  }
  return "?";
}

std::string_view to_string(OperatorPass p) {
  switch (p) {
    case OperatorPass::forward: return "forward";
    case OperatorPass::backward_input: return "backward_input";
    case OperatorPass::backward_weight: return "backward_weight";
    case OperatorPass::recompute: return "recompute";
  }
  return "?";
}

LayerDims layer_dims(const Plan& plan) {
  const auto& m = plan.model;
  const auto& l = plan.layout;
  LayerDims d{};
  d.b = static_cast<double>(plan.training.micro_batch);
  d.sq = static_cast<double>(plan.training.seq_len) / static_cast<double>(l.cp);
  d.skv = static_cast<double>(plan.training.seq_len);
  d.T = d.b * d.sq;
  d.h = static_cast<double>(m.hidden);
  d.q = static_cast<double>(m.q_width());
  d.k = static_cast<double>(m.kv_width());
  d.f = static_cast<double>(m.ffn_hidden);
  d.heads = static_cast<double>(m.heads);
  d.d = static_cast<double>(m.effective_head_dim());
  d.t = static_cast<double>(l.tp);
  // Activations stay in 16 bits under fp8 training (Transformer Engine casts GEMM inputs only).
  d.e = plan.training.precision == Precision::fp32 || plan.training.precision == Precision::tf32 ? 4.0 : 2.0;
  d.mask = m.dropout ? 1.0 : 0.0;
  d.gate = m.gated_mlp ? 2.0 : 1.0;
  d.sp = l.sequence_parallel && l.tp > 1;
  d.flash = plan.training.attention == AttentionKernel::flash;
  d.causal = true;  // decoder-only models
  if (m.mla.enabled()) {
    // MLA: queries/keys of qk_head_dim, values of v_head_dim; the core's QK^T and AV cost
    // 2 s^2 heads (qk + v), i.e. 4 s^2 heads d with d their mean.
    d.q = static_cast<double>(m.heads * m.mla.v_head_dim);
    d.k = static_cast<double>(m.heads * m.mla.qk_head_dim());
    d.d = static_cast<double>(m.mla.qk_head_dim() + m.mla.v_head_dim) / 2;
  }
  return d;
}

void for_each_layer_operator(const Plan& plan, const DeviceModel& dev, OperatorSink& sink) {
  const LayerDims d = layer_dims(plan);
  Emitter out(dev, sink);
  out.set_fp8(plan.training.precision == Precision::fp8);
  if (plan.model.mla.enabled()) {
    mla_gemms(out, d, plan.model.mla);
  } else {
    out.gemm("QKV", step::kQkv, d.T, (d.q + 2 * d.k) / d.t, d.h);
    out.gemm("attention output", step::kAttentionOut, d.T, d.h, d.q / d.t, 1, true);
  }
  out.gemm(plan.model.gated_mlp ? "MLP gate + up" : "MLP up", step::kMlpUp, d.T, d.gate * d.f / d.t, d.h);
  out.gemm("MLP down", step::kMlpDown, d.T, d.h, d.f / d.t);
  out.set_core(true);
  attention_core(d, plan.model.mla.enabled(), dev, out);
  out.set_core(false);

  // Element-wise kernels on [T, h] (split by t with sequence parallelism): two norms, two
  // bias + dropout + residual adds; on [T, f/t]: the activation; on Q and K: rotary embedding.
  const double rows = d.T / (d.sp ? d.t : 1.0);
  const ElementFlops norm = norm_flops(plan);
  out.elementwise("norm (attention)", step::kNormAttention, kNorm, norm, rows * d.h, rows * d.h * 2 * d.e, rows * d.h * 3 * d.e);
  out.elementwise("norm (MLP)", step::kNormMlp, kNorm, norm, rows * d.h, rows * d.h * 2 * d.e, rows * d.h * 3 * d.e);
  out.elementwise("residual (attention)", step::kResidualAttention, kResidual, kResidualFlops, rows * d.h,
                  rows * d.h * (3 * d.e + d.mask), rows * d.h * (2 * d.e + d.mask));
  out.elementwise("residual (MLP)", step::kResidualMlp, kResidual, kResidualFlops, rows * d.h, rows * d.h * (3 * d.e + d.mask),
                  rows * d.h * (2 * d.e + d.mask));
  out.elementwise(plan.model.gated_mlp ? "activation (SwiGLU)" : "activation (GeLU)", step::kActivation, kActivation,
                  kActivationFlops, d.T * d.f / d.t, d.T * d.f / d.t * (d.gate + 1) * d.e,
                  d.T * d.f / d.t * (2 * d.gate + 1) * d.e);
  if (plan.model.position == PositionKind::rope) {
    out.elementwise("rotary embedding", step::kRotary, kRotary, kRotaryFlops, d.T * (d.q + d.k) / d.t,
                    d.T * (d.q + d.k) / d.t * 2 * d.e, d.T * (d.q + d.k) / d.t * 2 * d.e);
  }
}

void for_each_lm_head_operator(const Plan& plan, const DeviceModel& dev, std::int64_t vocab, OperatorSink& sink) {
  const LayerDims d = layer_dims(plan);
  const double v = static_cast<double>(vocab) / d.t;
  Emitter out(dev, sink);
  const double rows = d.T / (d.sp ? d.t : 1.0);
  out.elementwise("final norm", 0, kNorm, norm_flops(plan), rows * d.h, rows * d.h * 2 * d.e, rows * d.h * 3 * d.e);
  out.gemm("logits", 1, d.T, v, d.h);
  // Vocabulary-parallel cross-entropy: read logits, keep fp32 softmax; backward writes dlogits.
  out.elementwise("cross-entropy", 2, kCrossEntropy, kCrossEntropyFlops, d.T * v, d.T * v * (d.e + 4), d.T * v * (4 + d.e));
}

bool recomputed(const Plan& plan, const OperatorCost& op) {
  switch (plan.layout.recompute) {
    case Recompute::none: return false;
    case Recompute::selective: return op.attention_core && plan.training.attention != AttentionKernel::flash;
    case Recompute::full: return true;
  }
  return false;
}

std::vector<OperatorCost> layer_operators(const Plan& plan, const DeviceModel& device) {
  ListSink list;
  for_each_layer_operator(plan, device, list);
  return ordered(plan, std::move(list.ops), true);
}

std::vector<OperatorCost> moe_layer_operators(const Plan& plan, const DeviceModel& device) {
  ListSink list;
  for_each_layer_operator(moe_dense_part(plan), device, list);
  // The dense part's MLP is the shared experts (SharedExpertMLP): named so beside the routed ones.
  for (auto& op : list.ops) {
    if (op.name == "MLP gate + up" || op.name == "MLP up") op.name = "shared experts FC1";
    if (op.name == "MLP down") op.name = "shared experts FC2";
    if (op.name.starts_with("activation")) op.name = "shared experts activation";
  }
  for_each_routed_expert_operator(plan, device, list);
  return ordered(plan, std::move(list.ops), true);
}

std::vector<OperatorCost> lm_head_operators(const Plan& plan, const DeviceModel& device, std::int64_t vocab) {
  ListSink list;
  for_each_lm_head_operator(plan, device, vocab, list);
  return ordered(plan, std::move(list.ops), false);
}

}  // namespace plansight::estimator
