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
// the gradients. The all-to-all is exposed (Megatron-Core's default) unless layout.ep_overlap
// pairs micro-batches as Megatron-Core's combined 1F1B does (below); DualPipe's own pairing is
// not modelled. The kernels of 2-5 are
// for_each_routed_expert_operator's (operator_costs.h), summed here beside the communication.
#include "moe_memory.h"
#include "operator_emitter.h"
#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/operator_costs.h"

#include <algorithm>

namespace plansight::estimator {
namespace {

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

// Tokens on this GPU per micro-batch (its local shard: T / t with sequence parallelism), the
// routed copies its experts receive (rows), and bytes per activation element.
struct RoutedTokens {
  double element_bytes, tokens, rows;
};
RoutedTokens routed_tokens(const Plan& plan) {
  const LayoutSpec& l = plan.layout;
  const double split = l.sequence_parallel && l.tp > 1 ? static_cast<double>(l.tp) : 1.0;
  const double tokens = static_cast<double>(plan.training.micro_batch) * static_cast<double>(plan.training.seq_len) /
                        static_cast<double>(l.cp) / split;
  return {plan.training.precision == Precision::fp32 || plan.training.precision == Precision::tf32 ? 4.0 : 2.0, tokens,
          tokens * routed_copies_per_token(plan)};
}

// Adds the routed experts' operators to the dense part's sums, in the order they come. Their
// recomputation is the full forward's (below); selective recomputation re-runs only attention.
struct ExpertSum final : OperatorSink {
  explicit ExpertSum(PassCost start) : sum(start) {}
  void add(const OperatorCost& op) override {
    PhaseCost& phase = op.pass == OperatorPass::forward          ? sum.forward
                       : op.pass == OperatorPass::backward_input ? sum.backward_input
                                                                 : sum.backward_weight;
    phase.compute_s += op.seconds;
    if (op.matmul) phase.flops += op.flops;
  }
  PassCost sum;
};

}  // namespace

Plan moe_dense_part(const Plan& plan) {
  Plan shared = plan;
  shared.model.ffn_hidden = plan.model.moe.shared_experts * plan.model.moe.effective_shared_ffn_hidden();
  shared.model.moe = MoeSpec{};
  return shared;
}

void for_each_routed_expert_operator(const Plan& plan, const DeviceModel& dev, OperatorSink& sink) {
  const ModelSpec& model = plan.model;
  const MoeSpec& moe = model.moe;
  const LayoutSpec& l = plan.layout;
  operators::Emitter out(dev, sink);
  using namespace operators;

  const RoutedTokens routed = routed_tokens(plan);
  const double e = routed.element_bytes, tokens = routed.tokens, rows = routed.rows;
  const double h = static_cast<double>(model.hidden);
  const double experts = static_cast<double>(moe.experts);
  const double etp = static_cast<double>(l.expert_tp());
  const double gate = model.gated_mlp ? 2.0 : 1.0;
  const double f = static_cast<double>(moe.expert_ffn_hidden) / etp;

  // Router (replicated weights) and its fp32 scoring (read logits, write scores and indices).
  out.set_fp8(false);  // Megatron-Core's router runs in 16 or 32 bits
  out.gemm("router", step::kMlpUp - 0.4, tokens, experts, h, 1);
  out.set_fp8(plan.training.precision == Precision::fp8);
  out.streaming("router scoring", step::kMlpUp - 0.3, kRouterFlops, tokens * experts, tokens * experts * (e + 4) * 2,
                tokens * experts * (e + 4) * 2);

  // Routed experts on this GPU: grouped GEMMs, M = tokens per local expert.
  const double local_experts = experts / static_cast<double>(l.ep);
  const double per_expert = rows / local_experts;
  // Under fp8 both take a cast of their input: the permuted tokens and the activation's output
  // (Megatron-Core's grouped experts do not fuse them).
  out.gemm("experts FC1 (grouped)", step::kMlpUp + 0.1, per_expert, gate * f, h, local_experts, true);  // gate and up
  out.gemm("experts FC2 (grouped)", step::kMlpDown + 0.1, per_expert, h, f, local_experts, true);
  out.streaming("expert activation", step::kActivation + 0.1, kActivationFlops, rows * f, rows * f * (gate + 1) * e,
                rows * f * (2 * gate + 1) * e);
  // Permute before dispatch and unpermute after combine: two kernels, each reading and writing
  // every routed copy.
  out.streaming("permute + unpermute", step::kMlpUp - 0.2, kCopyFlops, rows * h, rows * h * e * 2, rows * h * e * 2, 2);
}

PassCost moe_layer_cost(const Plan& plan, const DeviceModel& dev, const CommLinks& links) {
  const ModelSpec& model = plan.model;
  const LayoutSpec& l = plan.layout;

  // Attention and shared experts, then the router, permutation and routed experts (above) added
  // to the same sums.
  const PassCost dense = layer_cost(moe_dense_part(plan), dev, links);
  ExpertSum experts(dense);
  for_each_routed_expert_operator(plan, dev, experts);
  PassCost c = experts.sum;

  const RoutedTokens routed = routed_tokens(plan);
  const double e = routed.element_bytes, rows = routed.rows;
  const double h = static_cast<double>(model.hidden);
  const double etp = static_cast<double>(l.expert_tp());

  // Dispatch and combine: this GPU's buffer is its routed copies before the ETP gather.
  const double dispatch_bytes = rows / etp * h * e;
  double pass = 2 * all_to_all_seconds(plan.cluster, dev.efficiency(), dispatch_bytes, l.ep, l.expert_tp());
  if (l.expert_tp() > 1) {
    pass += collective_seconds(Collective::all_gather, rows * h * e, l.expert_tp(), links.etp) +
            collective_seconds(Collective::reduce_scatter, rows * h * e, l.expert_tp(), links.etp);
  }
  if (l.ep_overlap) {
    // Combined 1F1B (Megatron-Core user guide, "Combined 1F1B: Expert-Parallel All-to-All
    // Overlap"): a forward is paired with an adjacent micro-batch's backward, and each one's
    // dispatch and combine run under the other's computation of the same layer; what the
    // partner's computation cannot cover stays exposed. The pipeline's warm-up and cool-down
    // have no partner and are charged as the steady state (an optimistic bound there).
    const double backward_compute = c.backward_input.compute_s + c.backward_weight.compute_s;
    c.forward.ep_comm_s += std::max(0.0, pass - backward_compute);
    c.backward_input.ep_comm_s += std::max(0.0, pass - c.forward.compute_s);
    c.forward.ep_hidden_s += std::min(pass, backward_compute);
    c.backward_input.ep_hidden_s += std::min(pass, c.forward.compute_s);
  } else {
    c.forward.ep_comm_s += pass;
    c.backward_input.ep_comm_s += pass;
  }
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
