// One MoE layer on the busiest GPU of its expert-parallel group (Megatron-Core MoELayer with the
// all-to-all token dispatcher, moe/token_dispatcher.py):
//  1. attention and shared experts: layer_cost() of the same layer with the shared experts as
//     its dense MLP (SharedExpertMLP is a TP-split MLP of shared_experts x shared width);
//  2. router: a [T, h] x [h, E] GEMM on every TP rank and the fp32 top-k scoring;
//  3. dispatch: permute the local tokens (read + write T k h), all-to-all over the EP group
//     (each GPU sends T k h elements; NVLink to the members in its node, its NIC to the others:
//     all_to_all_seconds below), all-gather over ETP when etp > 1;
//  4. experts: grouped GEMMs over the E/ep local experts, M = tokens per expert. The device
//     model's tile and wave quantisation pads every expert's M to a whole tile, which is how
//     grouped GEMMs lose efficiency at small token counts per expert (CUTLASS grouped GEMM
//     schedules tiles per group);
//  5. combine: the reverse all-to-all (and reduce-scatter over ETP), unpermute.
// Tokens per GPU come from the local shard (T / t with sequence parallelism), times top_k,
// times etp, times the assumed max/mean imbalance (capped by the capacity factor): the
// busiest GPU sets the pace of the whole EP group. The backward repeats both all-to-alls on
// the gradients. No overlap of the all-to-all with compute (Megatron-Core's default; its
// --overlap-moe-expert-parallel-comm and DualPipe are not modelled here).
#include "moe_memory.h"
#include "plansight/estimator/layer_costs.h"

#include <algorithm>

namespace plansight::estimator {
namespace {

// The forward GEMM of every local expert and its two backward GEMMs, as one grouped GEMM each.
void add_grouped_gemm(PassCost& c, const DeviceModel& dev, double m, double n, double k, double groups) {
  c.forward.compute_s += dev.gemm_seconds(m, n, k, groups);
  c.forward.flops += 2 * m * n * k * groups;
  c.backward_input.compute_s += dev.gemm_seconds(m, k, n, groups);
  c.backward_input.flops += 2 * m * n * k * groups;
  c.backward_weight.compute_s += dev.gemm_seconds(k, n, m, groups);
  c.backward_weight.flops += 2 * m * n * k * groups;
}

// One all-to-all of `bytes` per GPU over `ranks` GPUs `stride` apart. Each GPU keeps 1/n of its
// buffer, sends (g - 1)/n to the g - 1 group members in its node over NVLink and (n - g)/n to the
// others over its own NIC, both at once; the slower path sets the time (DeepSeek-V3 report,
// Sec. 3.2.2: cross-node all-to-all is bound by the IB bandwidth per GPU, intra-node by NVLink).
// NCCL issues n - 1 pairwise exchanges: one latency each.
double all_to_all_seconds(const ClusterSpec& cluster, const DeviceEfficiency& eff, double bytes, std::int64_t ranks,
                          std::int64_t stride) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double n = static_cast<double>(ranks);
  const bool inside = cluster.gpus_per_node > 0 && stride * ranks <= cluster.gpus_per_node;
  const double per_node = inside ? n
                                 : std::clamp(static_cast<double>(cluster.gpus_per_node) / static_cast<double>(stride), 1.0, n);
  const double nvlink = cluster.intra_node_bandwidth_bytes_per_s * eff.nvlink_fraction;
  const double nic = cluster.inter_node_bandwidth_bytes_per_s * eff.network_fraction;
  const double intra_s = per_node > 1 ? bytes * (per_node - 1) / n / (nvlink > 0 ? nvlink : 1.0) : 0.0;
  const double inter_s = per_node < n ? bytes * (n - per_node) / n / (nic > 0 ? nic : 1.0) : 0.0;
  const double latency = inside ? cluster.intra_node_latency_s : cluster.inter_node_latency_s;
  return (n - 1) * latency + std::max(intra_s, inter_s);
}

}  // namespace

PassCost moe_layer_cost(const Plan& plan, const DeviceModel& dev, const CommLinks& links) {
  const ModelSpec& model = plan.model;
  const MoeSpec& moe = model.moe;
  const LayoutSpec& l = plan.layout;

  Plan shared = plan;
  shared.model.ffn_hidden = moe.shared_experts * moe.effective_shared_ffn_hidden();
  shared.model.moe = MoeSpec{};
  PassCost c = layer_cost(shared, dev, links);

  const double e = plan.training.precision == Precision::fp32 || plan.training.precision == Precision::tf32 ? 4.0 : 2.0;
  const double h = static_cast<double>(model.hidden);
  const double split = l.sequence_parallel && l.tp > 1 ? static_cast<double>(l.tp) : 1.0;
  const double tokens = static_cast<double>(plan.training.micro_batch) * static_cast<double>(plan.training.seq_len) /
                        static_cast<double>(l.cp) / split;
  const double experts = static_cast<double>(moe.experts);
  const double etp = static_cast<double>(l.expert_tp());
  const double gate = model.gated_mlp ? 2.0 : 1.0;
  const double f = static_cast<double>(moe.expert_ffn_hidden) / etp;

  // Router (replicated weights) and its fp32 scoring (read logits, write scores and indices).
  add_grouped_gemm(c, dev, tokens, experts, h, 1);
  c.forward.compute_s += dev.memory_seconds(tokens * experts * (e + 4) * 2);
  c.backward_input.compute_s += dev.memory_seconds(tokens * experts * (e + 4) * 2);

  // Routed experts on this GPU.
  const double rows = tokens * routed_copies_per_token(plan);
  const double local_experts = experts / static_cast<double>(l.ep);
  const double per_expert = rows / local_experts;
  add_grouped_gemm(c, dev, per_expert, gate * f, h, local_experts);  // FC1 (gate and up)
  add_grouped_gemm(c, dev, per_expert, h, f, local_experts);         // FC2
  c.forward.compute_s += dev.memory_seconds(rows * f * (gate + 1) * e);       // activation (SwiGLU)
  c.backward_input.compute_s += dev.memory_seconds(rows * f * (2 * gate + 1) * e);
  // Permute before dispatch and unpermute after combine: read and write every routed copy.
  c.forward.compute_s += 2 * dev.memory_seconds(rows * h * e * 2);
  c.backward_input.compute_s += 2 * dev.memory_seconds(rows * h * e * 2);

  // Dispatch and combine: this GPU's buffer is its routed copies before the ETP gather.
  const double dispatch_bytes = rows / etp * h * e;
  double pass = 2 * all_to_all_seconds(plan.cluster, dev.efficiency(), dispatch_bytes, l.ep, l.expert_tp());
  if (l.expert_tp() > 1) {
    pass += collective_seconds(Collective::all_gather, rows * h * e, l.expert_tp(), links.etp) +
            collective_seconds(Collective::reduce_scatter, rows * h * e, l.expert_tp(), links.etp);
  }
  c.forward.ep_comm_s += pass;
  c.backward_input.ep_comm_s += pass;
  // Bytes sent: dispatch and combine each send the (ep - 1)/ep of the buffer bound for other
  // GPUs; the ETP gather and scatter as ring collectives.
  const double ep_ranks = static_cast<double>(std::max<std::int64_t>(l.ep, 1));
  const double pass_bytes = 2 * dispatch_bytes * (ep_ranks - 1) / ep_ranks +
                            sent_bytes(Collective::all_gather, rows * h * e, l.expert_tp()) +
                            sent_bytes(Collective::reduce_scatter, rows * h * e, l.expert_tp());
  c.forward.ep_bytes += pass_bytes;
  c.backward_input.ep_bytes += pass_bytes;

  if (l.recompute == Recompute::full) c.recompute = c.forward;  // the whole MoE forward re-runs
  return c;
}

}  // namespace plansight::estimator
