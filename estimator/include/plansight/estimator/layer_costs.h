// Seconds of one transformer layer (and of the embedding and LM head) for one micro-batch on one
// GPU: every GEMM, attention kernel and memory-bound kernel of Megatron-LM's layer, forward and
// backward (input gradient and weight gradient apart, for zero-bubble schedules), plus the
// tensor- and context-parallel communication the layer waits on.
#pragma once

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/device_model.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct PhaseCost {
  double compute_s = 0;  // GEMMs, attention and element-wise kernels
  double tp_comm_s = 0;  // tensor-parallel collectives on the critical path
  double cp_comm_s = 0;  // context-parallel exchanges not hidden behind attention
  double flops = 0;      // hardware FLOPs of the compute
  double total_s() const { return compute_s + tp_comm_s + cp_comm_s; }
  PhaseCost& operator+=(const PhaseCost& o) {
    compute_s += o.compute_s;
    tp_comm_s += o.tp_comm_s;
    cp_comm_s += o.cp_comm_s;
    flops += o.flops;
    return *this;
  }
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
};
CommLinks plan_links(const Plan& plan, const DeviceEfficiency& efficiency);

PassCost layer_cost(const Plan& plan, const DeviceModel& device, const CommLinks& links);
PassCost embedding_cost(const Plan& plan, const DeviceModel& device, const CommLinks& links);
PassCost lm_head_cost(const Plan& plan, const DeviceModel& device, const CommLinks& links, std::int64_t vocab);

}  // namespace plansight::estimator
