// Seconds of a Megatron-LM transformer layer on one GPU for one micro-batch: the sum of its
// operators (operator_costs.cpp: every GEMM, attention and element-wise kernel, with its shape
// under TP and sequence parallelism) plus the communication the layer waits on. Without
// sequence parallelism two all-reduces of T*h elements per layer in forward and two in backward;
// with it, two all-gathers and two reduce-scatters each way (Korthikanti et al. 2022, Sec.
// 4.2.2). None of it overlaps compute (Megatron-LM's default) unless layout.tp_overlap: then the
// all-gathers and reduce-scatters run in chunks under the layer's linear GEMMs and only their
// excess is exposed.
#include "plansight/estimator/layer_costs.h"

#include <algorithm>
#include <cstdlib>

#include "layer_dims.h"
#include "operator_emitter.h"
#include "tp_overlap.h"
#include "plansight/estimator/operator_costs.h"

namespace plansight::estimator {
namespace {

// Adds operators' seconds and matmul FLOPs into a PassCost as they come; the attention core's
// into a subtotal of its own (the CP ring hides behind it), which joins the sum where the core
// ends; the linear layers' GEMMs (matmuls outside the core, split over TP: hides_tp) also into linear(block), the
// attention block's (QKV, output projection) and the MLP block's apart: each block's TP
// collectives hide behind its own GEMMs with layout.tp_overlap. With `recompute`, forward
// operators that recomputed() says run again are added to the recompute phase too (a layer's;
// the LM head is not recomputed).
class PassSum final : public OperatorSink {
 public:
  PassSum(const Plan& plan, bool recompute) : plan_(plan), recompute_(recompute) {}
  void add(const OperatorCost& op) override {
    if (op.attention_core) {
      in_core_ = true;
    } else {
      flush_core();
    }
    PassCost& into = op.attention_core ? core_ : sum_;
    add_to(into, op.pass, op);
    if (hides_tp(op)) add_to(linear_[op.step < operators::step::kNormMlp ? 0 : 1], op.pass, op);
    if (recompute_ && op.pass == OperatorPass::forward && recomputed(plan_, op)) add_to(into, OperatorPass::recompute, op);
  }
  const PassCost& total() {
    flush_core();
    return sum_;
  }
  const PassCost& core() const { return core_; }  // the attention core's part of total()
  // The linear layers' GEMMs of total(): block 0 the attention block's, 1 the MLP block's.
  const PassCost& linear(int block) const { return linear_[block]; }

 private:
  static void add_to(PassCost& c, OperatorPass pass, const OperatorCost& op) {
    PhaseCost& phase = pass == OperatorPass::forward           ? c.forward
                       : pass == OperatorPass::backward_input  ? c.backward_input
                       : pass == OperatorPass::backward_weight ? c.backward_weight
                                                               : c.recompute;
    phase.compute_s += op.seconds;
    if (op.matmul) phase.flops += op.flops;
  }
  void flush_core() {
    if (!in_core_) return;
    in_core_ = false;
    sum_.forward += core_.forward;
    sum_.backward_input += core_.backward_input;
    sum_.backward_weight += core_.backward_weight;
    sum_.recompute += core_.recompute;
  }

  const Plan& plan_;
  bool recompute_;
  PassCost sum_, core_, linear_[kTpBlocks];
  bool in_core_ = false;
};

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
  out.cp_hidden_s = c.cp_hidden_s * k;
  out.ep_hidden_s = c.ep_hidden_s * k;
  out.tp_hidden_s = c.tp_hidden_s * k;
  out.zero3_gather_hidden_s = c.zero3_gather_hidden_s * k;
  out.zero3_reduce_scatter_hidden_s = c.zero3_reduce_scatter_hidden_s * k;
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
  const double forward_exposed = std::max(0.0, gather_s - forward.compute_s);
  forward.dp_comm_s += forward_exposed;
  forward.zero3_gather_hidden_s += gather_s - forward_exposed;
  // The backward's gather runs first, then the reduce-scatter: compute hides them in that order.
  const double backward_compute = backward_input.compute_s + backward_weight.compute_s;
  backward_input.dp_comm_s += std::max(0.0, gather_s + reduce_scatter_s - backward_compute);
  backward_input.zero3_gather_hidden_s += std::min(gather_s, backward_compute);
  backward_input.zero3_reduce_scatter_hidden_s += std::clamp(backward_compute - gather_s, 0.0, reduce_scatter_s);
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
  const LayerDims d = layer_dims(plan);
  PassSum kernels(plan, true);
  for_each_layer_operator(plan, dev, kernels);
  PassCost c = kernels.total();
  const PassCost& core = kernels.core();

  // Tensor-parallel collectives over [T, h] (the full tensor size, as nccl-tests counts it).
  const double activation_bytes = d.T * d.h * d.e;
  const std::int64_t tp = plan.layout.tp;
  const double tp_pass = d.sp ? 2 * (collective_seconds(Collective::all_gather, activation_bytes, tp, links.tp) +
                                     collective_seconds(Collective::reduce_scatter, activation_bytes, tp, links.tp))
                              : 2 * collective_seconds(Collective::all_reduce, activation_bytes, tp, links.tp);
  if (plan.layout.tp_overlap && d.sp) {
    // Megatron-Core's --tp-comm-overlap (Transformer Engine userbuffers): each all-gather is
    // pipelined with the GEMM that consumes it and each reduce-scatter with the GEMM that produces
    // it, chunk by chunk (Wang et al., ASPLOS 2023), so each block's all-gather and reduce-scatter
    // (half of the pass's) hide behind that block's linear GEMMs: the forward's behind the
    // forward's, the backward's behind the input-gradient GEMMs only, since zero-bubble schedules
    // run the weight-gradient GEMMs later. Only the excess is exposed. A MoE layer's dense part
    // (moe_layer_costs.cpp) has no MLP GEMMs but its shared experts': its routed experts' grouped
    // GEMMs are not Transformer Engine's overlapped linear layers.
    double forward_hidden = 0, backward_hidden = 0;
    for (int block = 0; block < kTpBlocks; ++block) {
      forward_hidden += tp_block_hidden_s(tp_pass, kernels.linear(block).forward.compute_s);
      backward_hidden += tp_block_hidden_s(tp_pass, kernels.linear(block).backward_input.compute_s);
    }
    c.forward.tp_comm_s += tp_pass - forward_hidden;
    c.forward.tp_hidden_s += forward_hidden;
    c.backward_input.tp_comm_s += tp_pass - backward_hidden;
    c.backward_input.tp_hidden_s += backward_hidden;
  } else {
    c.forward.tp_comm_s += tp_pass;
    c.backward_input.tp_comm_s += tp_pass;
  }
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
    c.forward.cp_hidden_s += std::min(ring, core.forward.compute_s);
    c.backward_input.cp_hidden_s += std::min(2 * ring, core.backward_input.compute_s);
    const double ring_bytes = static_cast<double>(plan.layout.cp - 1) * kv_bytes;
    c.forward.cp_bytes += ring_bytes;
    c.backward_input.cp_bytes += 2 * ring_bytes;
  }

  // Full recomputation re-runs the forward's collectives too; its kernels (recomputed()) are
  // the forward's, so the phase is the forward's whole.
  if (plan.layout.recompute == Recompute::full) c.recompute = c.forward;
  return c;
}

PassCost embedding_cost(const Plan& plan, const DeviceModel& dev, const CommLinks& links) {
  const LayerDims d = layer_dims(plan);
  PassCost c;
  // Lookup (+ learned positions) writes [T, h]; backward scatters [T, h] gradients into fp32.
  c.forward.compute_s += dev.elementwise_seconds(ElementwiseKind::embedding_forward, d.T * d.h * 3 * d.e);
  c.backward_input.compute_s += dev.elementwise_seconds(ElementwiseKind::embedding_backward, d.T * d.h * (d.e + 4) * 2);
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
  const LayerDims d = layer_dims(plan);
  PassSum kernels(plan, false);
  for_each_lm_head_operator(plan, dev, vocab, kernels);  // final norm, logits, cross-entropy
  PassCost c = kernels.total();
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
