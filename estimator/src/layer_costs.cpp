// Kernel-by-kernel cost of a Megatron-LM transformer layer on one GPU, for one micro-batch of
// T = b * s / cp tokens. Shapes per TP rank (Shoeybi et al. 2019, Sec. 3): QKV and the first MLP
// GEMM are column-parallel (N split by t), the attention output and second MLP GEMM
// row-parallel (K split by t). A forward GEMM Y[M,N] = X[M,K] W[K,N] costs, in backward, the
// input gradient dX = dY W^T (M x K x N) and the weight gradient dW = X^T dY (K x N x M).
// Element-wise kernels are memory bound (unless a measured profile says otherwise); their bytes follow the tensors Korthikanti et al. 2022
// Sec. 4 lists (norm inputs, dropout masks, activation inputs), divided by t with sequence
// parallelism. Communication: without sequence parallelism two all-reduces of T*h elements per
// layer in forward and two in backward; with it, two all-gathers and two reduce-scatters each
// way (Korthikanti Sec. 4.2.2). None of it overlaps compute (Megatron-LM's default).
#include "plansight/estimator/layer_costs.h"

#include <algorithm>
#include <cstdlib>

namespace plansight::estimator {
namespace {

struct Dims {
  double T, b, sq, skv, h, q, k, f, heads, d, t, e, mask, gate;
  bool sp, flash, causal;
};

Dims dims_of(const Plan& plan) {
  const auto& m = plan.model;
  const auto& l = plan.layout;
  Dims d{};
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

// A GEMM of the forward pass and its two backward GEMMs.
void add_gemm(PassCost& c, const DeviceModel& dev, double M, double N, double K, double batch = 1) {
  c.forward.compute_s += dev.gemm_seconds(M, N, K, batch);
  c.forward.flops += 2 * M * N * K * batch;
  c.backward_input.compute_s += dev.gemm_seconds(M, K, N, batch);
  c.backward_input.flops += 2 * M * N * K * batch;
  c.backward_weight.compute_s += dev.gemm_seconds(K, N, M, batch);
  c.backward_weight.flops += 2 * M * N * K * batch;
}

// The forward and backward kernels of one element-wise operation, named so that a measured
// profile can give each its own throughput (DeviceModel::elementwise_seconds).
struct Elementwise {
  ElementwiseKind forward, backward;
};
constexpr Elementwise kNorm{ElementwiseKind::norm_forward, ElementwiseKind::norm_backward};
constexpr Elementwise kResidual{ElementwiseKind::residual_forward, ElementwiseKind::residual_backward};
constexpr Elementwise kActivation{ElementwiseKind::activation_forward, ElementwiseKind::activation_backward};
constexpr Elementwise kSoftmax{ElementwiseKind::softmax_forward, ElementwiseKind::softmax_backward};
constexpr Elementwise kDropout{ElementwiseKind::dropout_forward, ElementwiseKind::dropout_backward};
constexpr Elementwise kCrossEntropy{ElementwiseKind::cross_entropy_forward, ElementwiseKind::cross_entropy_backward};
constexpr Elementwise kEmbedding{ElementwiseKind::embedding_forward, ElementwiseKind::embedding_backward};
constexpr Elementwise kRotary{ElementwiseKind::rotary_forward, ElementwiseKind::rotary_backward};

// An element-wise kernel moving `forward_bytes`, whose backward moves `backward_bytes`; memory
// bound unless the profile measured that kind.
void add_elementwise(PassCost& c, const DeviceModel& dev, Elementwise kind, double forward_bytes, double backward_bytes) {
  c.forward.compute_s += dev.elementwise_seconds(kind.forward, forward_bytes);
  c.backward_input.compute_s += dev.elementwise_seconds(kind.backward, backward_bytes);
}

// The attention core: scores, softmax, dropout and the weighted sum of values.
PassCost attention_core(const Dims& d, const DeviceModel& dev) {
  PassCost c;
  const double heads = d.heads / d.t;
  const double batch = d.b * heads;
  if (d.flash) {
    // FlashAttention skips fully masked blocks, so causal attention does about half the work;
    // its backward recomputes the scores: 2.5x the forward FLOPs (Dao 2023, Sec. 3.1).
    const double fwd = 4 * d.sq * d.skv * d.d * batch * (d.causal ? 0.5 : 1.0);
    c.forward.compute_s = dev.flash_attention_seconds(fwd, false);
    c.forward.flops = fwd;
    c.backward_input.compute_s = dev.flash_attention_seconds(2.5 * fwd, true);
    c.backward_input.flops = 2.5 * fwd;
    return c;
  }
  if (dev.has_fused_attention()) {
    // The device ran attention as one measured kernel (the CPU probe's fused loops): its own
    // time; the FLOPs stay those of the unfused products, the work the model counts.
    c.forward.compute_s = dev.fused_attention_seconds(batch, d.sq, d.d, false);
    c.forward.flops = 4 * d.sq * d.skv * d.d * batch;
    c.backward_input.compute_s = dev.fused_attention_seconds(batch, d.sq, d.d, true);
    c.backward_input.flops = 8 * d.sq * d.skv * d.d * batch;
    return c;
  }
  // QK^T and AV as batched GEMMs over b * heads/t; the full s x s product is computed and masked.
  c.forward.compute_s += dev.gemm_seconds(d.sq, d.skv, d.d, batch) + dev.gemm_seconds(d.sq, d.d, d.skv, batch);
  c.forward.flops += 4 * d.sq * d.skv * d.d * batch;
  // Backward: dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q.
  c.backward_input.compute_s += dev.gemm_seconds(d.sq, d.skv, d.d, batch) + dev.gemm_seconds(d.skv, d.d, d.sq, batch) +
                                dev.gemm_seconds(d.sq, d.d, d.skv, batch) + dev.gemm_seconds(d.skv, d.d, d.sq, batch);
  c.backward_input.flops += 8 * d.sq * d.skv * d.d * batch;
  // Fused scale-mask-softmax (read + write scores) and dropout (read, write output and mask);
  // backward reads probabilities and their gradient and writes the score gradient.
  const double scores = batch * d.sq * d.skv;
  add_elementwise(c, dev, kSoftmax, scores * 2 * d.e, scores * 3 * d.e);
  if (d.mask > 0) add_elementwise(c, dev, kDropout, scores * (2 * d.e + 1), scores * (2 * d.e + 1));
  return c;
}

// MLA's projections (DeepSeek-V2 Sec. 2.1.2; Megatron-Core MultiLatentAttention): the down
// projections run on every TP rank ("duplicated"), the up projections and the output
// projection are split over TP like QKV and the attention output.
void add_mla_gemms(PassCost& c, const DeviceModel& dev, const Dims& d, const MlaSpec& a) {
  const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
  const double qk = static_cast<double>(a.qk_head_dim()), v = static_cast<double>(a.v_head_dim);
  if (a.q_lora_rank > 0) {
    add_gemm(c, dev, d.T, ql, d.h);                      // q_a_proj
    add_gemm(c, dev, d.T, d.heads * qk / d.t, ql);       // q_b_proj
  } else {
    add_gemm(c, dev, d.T, d.heads * qk / d.t, d.h);      // q_proj
  }
  add_gemm(c, dev, d.T, kvl + static_cast<double>(a.qk_rope_head_dim), d.h);                // kv_a_proj_with_mqa
  add_gemm(c, dev, d.T, d.heads * (static_cast<double>(a.qk_nope_head_dim) + v) / d.t, kvl);  // kv_b_proj
  add_gemm(c, dev, d.T, d.h, d.heads * v / d.t);                                            // o_proj
}

}  // namespace

PhaseCost operator*(const PhaseCost& c, double k) {
  PhaseCost out;
  out.compute_s = c.compute_s * k;
  out.tp_comm_s = c.tp_comm_s * k;
  out.cp_comm_s = c.cp_comm_s * k;
  out.dp_comm_s = c.dp_comm_s * k;
  out.flops = c.flops * k;
  out.ep_comm_s = c.ep_comm_s * k;
  out.offload_s = c.offload_s * k;
  out.tp_bytes = c.tp_bytes * k;
  out.cp_bytes = c.cp_bytes * k;
  out.dp_bytes = c.dp_bytes * k;
  out.ep_bytes = c.ep_bytes * k;
  return out;
}

double per_layer_collective_seconds(Collective op, double bytes, std::int64_t units, std::int64_t ranks, const Link& link) {
  const double n = static_cast<double>(std::max<std::int64_t>(units, 1));
  return n * collective_seconds(op, bytes / n, ranks, link);
}

void add_zero3_communication(PhaseCost& forward, PhaseCost& backward_input, const PhaseCost& backward_weight,
                             double gather_s, double reduce_scatter_s, bool prefetch) {
  if (!prefetch) {  // every gather waits, and the gradients' reduce-scatter follows the backward
    forward.dp_comm_s += gather_s;
    backward_input.dp_comm_s += gather_s + reduce_scatter_s;
    return;
  }
  forward.dp_comm_s += std::max(0.0, gather_s - forward.compute_s);
  backward_input.dp_comm_s +=
      std::max(0.0, gather_s + reduce_scatter_s - (backward_input.compute_s + backward_weight.compute_s));
}

CommLinks plan_links(const Plan& plan, const DeviceEfficiency& eff) {
  const std::int64_t dp = plan.dp();
  CommLinks links;
  links.tp = group_link(plan.cluster, plan.layout, dp, Group::tp, eff.nvlink_fraction, eff.network_fraction);
  links.cp = group_link(plan.cluster, plan.layout, dp, Group::cp, eff.nvlink_fraction, eff.network_fraction);
  // Gradients are reduced over DP x CP ranks (parameters are replicated across CP ranks). When
  // the two dimensions sit next to each other in the placement the group is one span of ranks;
  // otherwise it is as slow as the slower of the two.
  links.dp = group_link(plan.cluster, plan.layout, dp, Group::dp, eff.nvlink_fraction, eff.network_fraction);
  if (plan.layout.cp > 1) {
    const auto& order = plan.layout.placement;
    const auto at = [&](Group g) { return std::find(order.begin(), order.end(), g) - order.begin(); };
    if (std::abs(at(Group::dp) - at(Group::cp)) == 1) {
      const std::int64_t stride = std::min(group_stride(plan.layout, dp, Group::dp), group_stride(plan.layout, dp, Group::cp));
      links.dp = span_link(plan.cluster, stride, dp * plan.layout.cp, eff.nvlink_fraction, eff.network_fraction);
    } else if (links.cp.bandwidth_bytes_per_s < links.dp.bandwidth_bytes_per_s) {
      links.dp = links.cp;
    }
  }
  links.pp = group_link(plan.cluster, plan.layout, dp, Group::pp, eff.nvlink_fraction, eff.network_fraction);
  if (plan.model.moe.enabled()) {
    // Megatron-Core's expert rank order inside a stage is etp-ep-edp (parallel_state.py,
    // RankGenerator with order "tp-ep-dp-pp" for experts).
    const std::int64_t etp = plan.layout.expert_tp();
    links.etp = span_link(plan.cluster, 1, etp, eff.nvlink_fraction, eff.network_fraction);
    links.edp = span_link(plan.cluster, etp * plan.layout.ep, plan.expert_dp(), eff.nvlink_fraction, eff.network_fraction);
  }
  return links;
}

PassCost layer_cost(const Plan& plan, const DeviceModel& dev, const CommLinks& links) {
  const Dims d = dims_of(plan);
  PassCost c;
  if (plan.model.mla.enabled()) {
    add_mla_gemms(c, dev, d, plan.model.mla);
  } else {
    add_gemm(c, dev, d.T, (d.q + 2 * d.k) / d.t, d.h);  // QKV
    add_gemm(c, dev, d.T, d.h, d.q / d.t);              // attention output
  }
  add_gemm(c, dev, d.T, d.gate * d.f / d.t, d.h);     // MLP up (and gate)
  add_gemm(c, dev, d.T, d.h, d.f / d.t);              // MLP down
  const PassCost core = attention_core(d, dev);
  c.forward += core.forward;
  c.backward_input += core.backward_input;

  // Element-wise kernels on [T, h] (split by t with sequence parallelism): two norms, two
  // bias + dropout + residual adds; on [T, f/t]: the activation; on Q and K: rotary embedding.
  const double rows = d.T / (d.sp ? d.t : 1.0);
  for (int i = 0; i < 2; ++i) add_elementwise(c, dev, kNorm, rows * d.h * 2 * d.e, rows * d.h * 3 * d.e);
  for (int i = 0; i < 2; ++i) add_elementwise(c, dev, kResidual, rows * d.h * (3 * d.e + d.mask), rows * d.h * (2 * d.e + d.mask));
  add_elementwise(c, dev, kActivation, d.T * d.f / d.t * (d.gate + 1) * d.e, d.T * d.f / d.t * (2 * d.gate + 1) * d.e);
  if (plan.model.position == PositionKind::rope) {
    add_elementwise(c, dev, kRotary, d.T * (d.q + d.k) / d.t * 2 * d.e, d.T * (d.q + d.k) / d.t * 2 * d.e);
  }

  // Tensor-parallel collectives over [T, h] (the full tensor size, as nccl-tests counts it).
  const double activation_bytes = d.T * d.h * d.e;
  const std::int64_t tp = plan.layout.tp;
  const double tp_pass = d.sp ? 2 * (collective_seconds(Collective::all_gather, activation_bytes, tp, links.tp) +
                                     collective_seconds(Collective::reduce_scatter, activation_bytes, tp, links.tp))
                              : 2 * collective_seconds(Collective::all_reduce, activation_bytes, tp, links.tp);
  c.forward.tp_comm_s += tp_pass;
  c.backward_input.tp_comm_s += tp_pass;
  const double tp_pass_bytes = d.sp ? 2 * (sent_bytes(Collective::all_gather, activation_bytes, tp) +
                                           sent_bytes(Collective::reduce_scatter, activation_bytes, tp))
                                    : 2 * sent_bytes(Collective::all_reduce, activation_bytes, tp);
  c.forward.tp_bytes += tp_pass_bytes;
  c.backward_input.tp_bytes += tp_pass_bytes;

  // Context parallelism: keys and values travel around the CP ring (cp - 1 steps, K and V
  // shards of this rank) while attention computes; only the excess is exposed. Backward also
  // returns their gradients: twice the volume.
  if (plan.layout.cp > 1) {
    const double kv_bytes = 2 * d.T * d.k / d.t * d.e;
    const double ring = static_cast<double>(plan.layout.cp - 1) *
                        collective_seconds(Collective::send_recv, kv_bytes, 2, links.cp);
    c.forward.cp_comm_s += std::max(0.0, ring - core.forward.compute_s);
    c.backward_input.cp_comm_s += std::max(0.0, 2 * ring - core.backward_input.compute_s);
    const double ring_bytes = static_cast<double>(plan.layout.cp - 1) * kv_bytes;
    c.forward.cp_bytes += ring_bytes;
    c.backward_input.cp_bytes += 2 * ring_bytes;
  }

  switch (plan.layout.recompute) {
    case Recompute::none: break;
    case Recompute::selective:
      // Korthikanti Sec. 5: only the attention core re-runs; flash attention already recomputes
      // its scores inside its backward kernel, so nothing more runs.
      if (!d.flash) c.recompute = core.forward;
      break;
    case Recompute::full: c.recompute = c.forward; break;  // the whole forward, collectives included
  }
  return c;
}

PassCost embedding_cost(const Plan& plan, const DeviceModel& dev, const CommLinks& links) {
  const Dims d = dims_of(plan);
  PassCost c;
  // Lookup (+ learned positions) writes [T, h]; backward scatters [T, h] gradients into fp32.
  add_elementwise(c, dev, kEmbedding, d.T * d.h * 3 * d.e, d.T * d.h * (d.e + 4) * 2);
  if (plan.layout.tp > 1) {
    // Vocabulary-parallel embedding: all-reduce of the partial lookups (reduce-scatter with
    // sequence parallelism).
    const double bytes = d.T * d.h * d.e;
    c.forward.tp_comm_s += d.sp ? collective_seconds(Collective::reduce_scatter, bytes, plan.layout.tp, links.tp)
                                : collective_seconds(Collective::all_reduce, bytes, plan.layout.tp, links.tp);
    c.forward.tp_bytes += d.sp ? sent_bytes(Collective::reduce_scatter, bytes, plan.layout.tp)
                               : sent_bytes(Collective::all_reduce, bytes, plan.layout.tp);
  }
  return c;
}

PassCost lm_head_cost(const Plan& plan, const DeviceModel& dev, const CommLinks& links, std::int64_t vocab) {
  const Dims d = dims_of(plan);
  const double v = static_cast<double>(vocab) / d.t;
  PassCost c;
  add_elementwise(c, dev, kNorm, d.T / (d.sp ? d.t : 1.0) * d.h * 2 * d.e, d.T / (d.sp ? d.t : 1.0) * d.h * 3 * d.e);  // final norm
  add_gemm(c, dev, d.T, v, d.h);  // logits
  // Vocabulary-parallel cross-entropy: read logits, keep fp32 softmax; backward writes dlogits.
  add_elementwise(c, dev, kCrossEntropy, d.T * v * (d.e + 4), d.T * v * (4 + d.e));
  if (d.sp) {
    const double bytes = d.T * d.h * d.e;
    c.forward.tp_comm_s += collective_seconds(Collective::all_gather, bytes, plan.layout.tp, links.tp);
    c.backward_input.tp_comm_s += collective_seconds(Collective::reduce_scatter, bytes, plan.layout.tp, links.tp);
    c.forward.tp_bytes += sent_bytes(Collective::all_gather, bytes, plan.layout.tp);
    c.backward_input.tp_bytes += sent_bytes(Collective::reduce_scatter, bytes, plan.layout.tp);
  }
  return c;
}

}  // namespace plansight::estimator
