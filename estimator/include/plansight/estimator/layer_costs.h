// Seconds of one transformer layer (and of the embedding and LM head) for one micro-batch on one
// GPU: every GEMM, attention kernel and memory-bound kernel of Megatron-LM's layer, forward and
// backward (input gradient and weight gradient apart, for zero-bubble schedules), summed from the
// operator list of operator_costs.h, plus the tensor- and context-parallel communication the
// layer waits on.
#pragma once

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/device_model.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct PhaseCost {
  double compute_s = 0;  // GEMMs, attention and element-wise kernels
  double tp_comm_s = 0;  // tensor-parallel collectives on the critical path
  double cp_comm_s = 0;  // context-parallel exchanges not hidden behind attention
  double dp_comm_s = 0;  // ZeRO-3 parameter gathers / gradient reduce-scatters not hidden behind compute
  double flops = 0;      // hardware FLOPs of the compute
  double ep_comm_s = 0;  // expert all-to-all dispatch/combine (and ETP gathers) on the critical path
  double offload_s = 0;  // host-link transfers of offloading not hidden behind the phase's compute
  // Bytes this GPU sends in the phase's collectives (sent_bytes(), comm_model.h), hidden or not.
  double tp_bytes = 0, cp_bytes = 0, dp_bytes = 0, ep_bytes = 0;
  // The collectives' time that compute hides (the rest is in the *_comm_s above): CP's ring
  // exchange under attention, EP's all-to-all under the paired micro-batch (layout.ep_overlap),
  // TP's all-gathers and reduce-scatters under the linear GEMMs (layout.tp_overlap), ZeRO-3's
  // prefetched parameter all-gather and its gradient reduce-scatter. They cost the iteration
  // nothing; the predicted timeline draws them beside the compute (to_op()).
  double cp_hidden_s = 0, ep_hidden_s = 0, tp_hidden_s = 0, zero3_gather_hidden_s = 0, zero3_reduce_scatter_hidden_s = 0;
  double total_s() const { return compute_s + tp_comm_s + cp_comm_s + dp_comm_s + ep_comm_s + offload_s; }
  PhaseCost& operator+=(const PhaseCost& o) {
    compute_s += o.compute_s;
    tp_comm_s += o.tp_comm_s;
    cp_comm_s += o.cp_comm_s;
    dp_comm_s += o.dp_comm_s;
    flops += o.flops;
    ep_comm_s += o.ep_comm_s;
    offload_s += o.offload_s;
    tp_bytes += o.tp_bytes;
    cp_bytes += o.cp_bytes;
    dp_bytes += o.dp_bytes;
    ep_bytes += o.ep_bytes;
    cp_hidden_s += o.cp_hidden_s;
    ep_hidden_s += o.ep_hidden_s;
    tp_hidden_s += o.tp_hidden_s;
    zero3_gather_hidden_s += o.zero3_gather_hidden_s;
    zero3_reduce_scatter_hidden_s += o.zero3_reduce_scatter_hidden_s;
    return *this;
  }
  friend bool operator==(const PhaseCost&, const PhaseCost&) = default;
};
PhaseCost operator*(const PhaseCost& c, double k);

struct PassCost {
  PhaseCost forward;
  PhaseCost backward_input;   // activation gradients (dgrad), attention and element-wise backward
  PhaseCost backward_weight;  // weight gradients (wgrad)
  PhaseCost recompute;        // what recomputation re-runs before the backward
};

struct CommLinks {
  Link tp, cp, dp, pp;
  // MoE models: the expert-tensor group and the expert-data-parallel group (Megatron-Core orders
  // expert ranks etp-ep-edp inside a stage); the all-to-all over ep is costed link by link in
  // moe_layer_costs.cpp.
  Link etp, edp;
};
CommLinks plan_links(const Plan& plan, const DeviceEfficiency& efficiency);

// ZeRO-3 / FSDP: every micro-batch all-gathers a chunk's parameters before its forward and again
// before its backward, and reduce-scatters its gradients after the backward (Rajbhandari et al.
// 2020, Sec. 7.2: 3 Psi per step of communication; DeepSpeed and FSDP repeat it per micro-batch
// under gradient accumulation). Prefetching hides each gather behind the compute it precedes;
// only the excess is exposed. Without prefetch (TrainingSpec::zero3_prefetch) all of it is.
void add_zero3_communication(PhaseCost& forward, PhaseCost& backward_input, const PhaseCost& backward_weight,
                             double gather_s, double reduce_scatter_s, bool prefetch = true);
// A collective over a chunk's `bytes` issued one transformer layer (FSDP unit) at a time: each
// of the `units` calls pays the ring's latency.
double per_layer_collective_seconds(Collective op, double bytes, std::int64_t units, std::int64_t ranks, const Link& link);

PassCost layer_cost(const Plan& plan, const DeviceModel& device, const CommLinks& links);
// One MoE layer (moe_layer_costs.cpp): attention and shared experts as layer_cost, plus the
// router, the routed experts' grouped GEMMs on the busiest GPU, permutation and the
// all-to-all dispatch and combine over the expert-parallel group.
PassCost moe_layer_cost(const Plan& plan, const DeviceModel& device, const CommLinks& links);
PassCost embedding_cost(const Plan& plan, const DeviceModel& device, const CommLinks& links);
PassCost lm_head_cost(const Plan& plan, const DeviceModel& device, const CommLinks& links, std::int64_t vocab);

}  // namespace plansight::estimator
