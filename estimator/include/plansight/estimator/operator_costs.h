// The operators (kernels) of one transformer layer and of the LM head for one micro-batch on one
// GPU, each with its shape, FLOPs, HBM bytes and the seconds DeviceModel predicts for it. This is
// the list layer_costs.cpp sums into the time model's compute time (layer_cost, moe_layer_cost,
// lm_head_cost), so a roofline or a table of these operators shows the time model's own costs,
// not a second estimate of them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

enum class OperatorClass : std::uint8_t { gemm, attention, elementwise };
// Weight-gradient GEMMs apart from the input-gradient work, as PassCost splits them; recompute:
// a forward operator run again before the backward (recomputed()).
enum class OperatorPass : std::uint8_t { forward, backward_input, backward_weight, recompute };
std::string_view to_string(OperatorClass c);  // "gemm", "attention", "elementwise"
std::string_view to_string(OperatorPass p);   // "forward", "backward_input", "backward_weight", "recompute"

struct OperatorCost {
  std::string_view name;  // "QKV", "MLP down", "softmax", ...: static text
  OperatorPass pass = OperatorPass::forward;
  OperatorClass op_class = OperatorClass::gemm;
  // GEMMs: C[m,n] = A[m,k] B[k,n], `batch` times, as DeviceModel::gemm_seconds costs it (TP and
  // sequence parallelism applied; a backward GEMM has its own shape: dX is m x k x n of the
  // forward's, dW k x n x m). Zero for other operators.
  double m = 0, n = 0, k = 0, batch = 0;
  // Arithmetic of the kernel. GEMMs and attention: 2 per multiply-add, the FLOPs the estimate's
  // hardware FLOPs count (`matmul`). Element-wise kernels: a nominal count per element (see
  // operator_costs.cpp), which places them on a roofline but is in no FLOP total.
  double flops = 0;
  // HBM traffic: what the time model charges a memory-bound kernel; a GEMM's operands once
  // (DeviceModel::gemm_bytes); fused attention's inputs and outputs once.
  double bytes = 0;
  double seconds = 0;            // DeviceModel's prediction: what the time model adds up
  bool matmul = false;           // its FLOPs count in PhaseCost::flops
  bool attention_core = false;   // scores, softmax, dropout and context (or the fused kernel)
  // A GEMM every TP rank runs whole, not split over TP (MLA's down projections, "duplicated" in
  // Megatron-Core): no TP collective runs under it with layout.tp_overlap (tp_overlap.h).
  bool tp_duplicated = false;
  // Position in the forward of the layer (0 = its first kernel); backward operators carry their
  // forward operator's, so that sorting by it descending gives the order the backward runs in.
  double step = 0;

  double intensity_flops_per_byte() const { return bytes > 0 ? flops / bytes : 0; }
};

// Receives the operators as they are enumerated (no allocation: layer_costs.cpp sums them for
// every layout the search costs).
class OperatorSink {
 public:
  virtual void add(const OperatorCost& op) = 0;

 protected:
  ~OperatorSink() = default;
};

// One dense layer's forward and backward operators (no recompute rows), in the order
// layer_cost() sums them.
void for_each_layer_operator(const Plan& plan, const DeviceModel& device, OperatorSink& sink);
// A MoE layer's router, permutation and routed experts on the busiest GPU of its EP group
// (moe_layer_costs.cpp); its attention and shared experts are the dense layer of
// moe_dense_part(plan).
void for_each_routed_expert_operator(const Plan& plan, const DeviceModel& device, OperatorSink& sink);
// The LM head on the last stage: final norm, logits GEMM over `vocab` / TP, cross-entropy.
void for_each_lm_head_operator(const Plan& plan, const DeviceModel& device, std::int64_t vocab, OperatorSink& sink);

// The attention and shared experts of a MoE layer as a dense layer: the model with a dense MLP of
// shared_experts x the shared expert's width (Megatron-Core's SharedExpertMLP).
Plan moe_dense_part(const Plan& plan);

// Whether a forward operator runs again before the backward: every one under full
// recomputation; the attention core under selective (Korthikanti et al. 2022, Sec. 5), except
// flash attention, whose backward kernel recomputes its scores itself.
bool recomputed(const Plan& plan, const OperatorCost& forward_op);

// The lists, with a recompute row after the forward rows for every recomputed operator; ordered
// forward (by step), recompute, backward (by step, last first), as they run.
std::vector<OperatorCost> layer_operators(const Plan& plan, const DeviceModel& device);
std::vector<OperatorCost> moe_layer_operators(const Plan& plan, const DeviceModel& device);
std::vector<OperatorCost> lm_head_operators(const Plan& plan, const DeviceModel& device, std::int64_t vocab);

}  // namespace plansight::estimator
