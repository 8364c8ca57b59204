// Offloading to host memory (ZeRO-Offload, ZeRO-Infinity, activation offloading): the bytes per
// parameter kept on the host, the CPU optimizer step and the host-link transfer times. One
// place for the rules that memory.cpp and iteration_costs.cpp apply, so both agree.
#pragma once

#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// Host bytes per parameter of a rank's shard with the optimizer offloaded: the fp32 copy the
// CPU updates (the master weights, or the weights themselves when there is no separate
// master), the optimizer states, and the fp32 gradient the CPU Adam reads. For bf16 + Adam:
// 4 + 8 + 4 = 16, ZeRO-Offload's 12 (fp32 parameters, momentum, variance) + 4 (fp32 gradients
// DeepSpeed accumulates on the host), Ren et al. 2021, Sec. 4.1 and Fig. 2.
double host_state_bytes_per_parameter(const TrainingSpec& training);

// Host DRAM bytes the CPU optimizer step touches per parameter: read and write the fp32 copy
// and the states, read the fp32 gradient, write the 16-bit weights sent back to the GPU.
// DeepSpeed's CPU Adam (csrc/adam/cpu_adam_impl.cpp, Step_AVX) streams exactly these arrays
// once. bf16 + Adam: 2 x (4 + 8) + 4 + 2 = 30 bytes.
double cpu_optimizer_bytes_per_parameter(const TrainingSpec& training);

// Seconds of the CPU optimizer step over `parameters` (one GPU's shard). The step is memory-bound
// (ZeRO-Offload Sec. 5.1 vectorises it until DRAM bandwidth limits it), and all GPUs of a node
// step at once, so each gets host_memory_bandwidth / gpus_per_node; at peak bandwidth, so this
// is a lower bound.
double cpu_optimizer_seconds(const Plan& plan, double parameters);

// Seconds to move `bytes` over one GPU's host link in one direction.
double host_link_seconds(const ClusterSpec& cluster, double bytes);

// GPUs that share one node's host memory.
double gpus_per_node_used(const ClusterSpec& cluster);

// Stored activations kept on the GPU with offload_activations, in layers: the layer computing
// and one more in flight on the host link (double buffering, as Megatron-Core's CPU offloading
// hands one layer to a copy stream while the next one runs).
inline constexpr double kActivationLayersKeptOnGpu = 2;

}  // namespace plansight::estimator
