// Per-GPU memory by component for every pipeline rank: model states (weights, gradients,
// optimizer, ZeRO 0-3), activations (Korthikanti 2022 generalised), communication buffers and
// the framework reserve.
#pragma once

#include <cstdint>

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// Bytes per parameter of each model state before any ZeRO partitioning.
struct StateBytesPerParameter {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;  // master weights + optimizer states
};
StateBytesPerParameter state_bytes_per_parameter(const TrainingSpec& training);

// Model-state bytes on one GPU for `parameters` held by it, ZeRO-partitioned over `shards`
// data-parallel ranks (Rajbhandari et al. 2020, Sec. 5: P_os, P_os+g, P_os+g+p).
MemoryBreakdown model_state_bytes(double parameters, const StateBytesPerParameter& per_param,
                                  std::int64_t zero_stage, std::int64_t shards);

// Activation bytes stored by one transformer layer for one micro-batch on one GPU, with the
// given recomputation (the plan's own by default).
double layer_activation_bytes(const Plan& plan, Recompute recompute);
inline double layer_activation_bytes(const Plan& plan) { return layer_activation_bytes(plan, plan.layout.recompute); }
// Bytes per element of a GEMM input saved for the backward: e (2 bytes; 4 in fp32/tf32), or
// under fp8 training Transformer Engine's fp8 copy (1 byte). `attention_output` is the output
// projection's input, which flash attention also keeps in 16 bits for its own backward.
struct Fp8SavedInputs {
  double input = 2, attention_output = 2;
};
Fp8SavedInputs fp8_saved_gemm_input_bytes(const Plan& plan);

// Activation gradients alive while one layer runs its backward, on top of what is stored
// (memory.cpp explains the terms).
double backward_working_bytes(const Plan& plan);

// Layers held by each model chunk, in pipeline order (chunk c of rank r at c * pp + r).
std::vector<std::int64_t> chunk_layers(const Plan& plan);

// Activation memory of rank `stage` in layer-equivalents: sum over its chunks of layers times
// micro-batches in flight at the peak, for the plan's schedule.
double in_flight_layer_equivalents(const Plan& plan, std::int64_t stage,
                                   const std::vector<std::int64_t>& chunks);

MemoryEstimate estimate_memory(const Plan& plan, std::int64_t padded_vocab);

}  // namespace plansight::estimator
