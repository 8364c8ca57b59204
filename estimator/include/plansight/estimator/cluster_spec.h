// GpuSpec and ClusterSpec: the hardware a plan runs on. Every preset number carries its source
// (datasheet or paper) in assets/presets; bandwidths are per GPU and per direction.
#pragma once

#include <cstdint>
#include <string>

#include "plansight/estimator/enums.h"

namespace plansight::estimator {

// What a GPU reaches of its datasheet peaks, measured and published (assets/presets/gpus.json,
// docs/time-model-sources.md). The defaults are low-confidence figures for a GPU without
// published measurements, which the probe's calibration on the machine itself supersedes.
struct GpuEfficiency {
  double gemm_peak_fraction = 0.80;      // best-shape cuBLAS GEMM over the dense peak (MAMF)
  double flash_forward_fraction = 0.45;  // FlashAttention forward over the dense peak
  double flash_backward_fraction = 0.35; // FlashAttention backward over the dense peak
  double nvlink_fraction = 0.75;         // nccl-tests all-reduce bus bandwidth over NVLink one direction
  // How much slower every compute kernel runs inside a real training step than alone (clocks under
  // sustained load, launch gaps, the memory traffic of neighbouring kernels), set from one
  // published end-to-end run per GPU. 1.15: Korthikanti et al. 2022's 530B on 2240 A100s
  // (device_model.cpp), the value for a GPU without a step-level measurement of its own.
  double in_step_slowdown = 1.15;
  std::string source;                    // where the figures come from; empty: the defaults
};

struct GpuSpec {
  std::string name;
  std::string source;
  std::int64_t memory_bytes = 0;
  double hbm_bandwidth_bytes_per_s = 0;
  // Dense (no sparsity) peak tensor/vector throughput per precision, FLOP/s; 0 = unsupported.
  double peak_fp32_flops = 0;
  double peak_tf32_flops = 0;
  double peak_fp16_flops = 0;
  double peak_bf16_flops = 0;
  double peak_fp8_flops = 0;
  double nvlink_bandwidth_bytes_per_s = 0;  // per GPU, one direction; 0 = PCIe only
  std::int64_t sm_count = 0;
  GpuEfficiency efficiency;

  double peak_flops(Precision p) const;
};

struct ClusterSpec {
  std::string name;    // system preset name, or "custom"
  std::string source;
  GpuSpec gpu;
  std::int64_t gpus = 0;           // GPUs used by the plan
  std::int64_t gpus_per_node = 8;
  double intra_node_bandwidth_bytes_per_s = 0;  // per GPU, one direction (NVLink/NVSwitch or PCIe)
  double inter_node_bandwidth_bytes_per_s = 0;  // per GPU, one direction (its share of the NICs)
  double intra_node_latency_s = 0;
  double inter_node_latency_s = 0;
  double price_per_gpu_hour = 0;   // `currency` per GPU-hour; 0 = unknown
  // What price_per_gpu_hour is counted in: the presets' prices are AWS on-demand list prices in
  // US dollars (assets/presets/systems.json); a plan with its own price names its own currency.
  std::string currency = "USD";
  // Processors all ranks share; 0: every rank has a device of its own (a real cluster). The
  // probe's ranks are threads on the cores of one machine (or virtual ranks on one GPU): when
  // they outnumber the processors, the time model's simulator shares them out (processor
  // sharing, pipeline_simulator.h).
  std::int64_t shared_processors = 0;
  // The host side, for offloading (presets' sources in assets/presets/systems.json); 0: unknown.
  double host_link_bandwidth_bytes_per_s = 0;    // per GPU, one direction: its PCIe (or C2C) link to the CPU
  std::int64_t host_memory_bytes = 0;            // per node: the CPUs' DRAM
  double host_memory_bandwidth_bytes_per_s = 0;  // per node: peak DRAM bandwidth of all its sockets
};

}  // namespace plansight::estimator
