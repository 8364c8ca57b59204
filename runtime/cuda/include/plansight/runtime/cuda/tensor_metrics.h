// Which performance-counter metrics say how busy the tensor cores were, per chip (the names the
// CUPTI profiler host API knows; listed with cuptiProfilerHostGetBaseMetrics for CUDA 13's
// chips). Ampere and Ada issue HMMA instructions; Hopper's cuBLAS kernels issue warpgroup GMMA
// (wgmma), which the plain hmma metrics miss, so Hopper uses the metric that counts cycles of
// HMMA, HGMMA and QGMMA together plus the GMMA instruction count. Plain C++.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace plansight::runtime::cuda {

struct TensorCoreMetrics {
  std::string chip;
  std::string active_pct;               // tensor pipe active, % of peak sustained (per SM, averaged)
  std::vector<std::string> instructions;  // warp-level MMA instruction counts, summed over SMs
  std::vector<std::string> all() const;   // active_pct then instructions
};

// The counters' tensor-core verdict for one kernel: it used the tensor cores iff its tensor pipe
// was active (`active_pct`, the metric TensorCoreMetrics::active_pct) for more than
// kTensorActivePctThreshold percent of peak, that is for any cycle at all. Not the instruction
// counts: on an NVIDIA H200 (GH100, bench/results/gpu-check-h200-2026-11-28-b) a bf16 GeLU that
// issues no MMA read 2048 tensor instructions (sm__inst_executed_pipe_tensor_op_hmma.sum +
// sm__inst_executed_pipe_tensor_op_gmma.sum) with the tensor pipe active 0.000 %, while a
// cuBLASLt bf16 GEMM read 24576 instructions and 15.458 % active. The threshold is 0 rather than a
// small positive figure because the metric counts cycles: a kernel without MMA work reads exactly
// 0 (the GeLU above), and a kernel with little MMA work (one tile on one SM of 132) reads a small
// but positive percentage that any positive threshold would call no tensor-core use. Instruction
// counts are kept as information only. Plain C++, shared by the runtime's readings and the probe.
inline constexpr double kTensorActivePctThreshold = 0.0;
inline bool tensor_pipe_active(double active_pct) { return active_pct > kTensorActivePctThreshold; }

// Each kernel's GPU duration in nanoseconds, read with the per-kernel counters so that an untraced
// run can weigh kernels by time: "equals to gpu__time_duration_measured_user if collectable,
// otherwise equals to gpu__time_duration_measured_wallclock" (CUDA 13.0's CUPTI,
// cuptiProfilerHostGetMetricProperties). Its range-profiler config builds for GV100, TU102, GA100,
// GA102, AD102 and GH100 beside the tensor metrics without adding a replay pass (checked with
// build_metric_config on CUDA 13.0).
inline constexpr const char* kKernelDurationMetric = "gpu__time_duration.sum";

// The metrics for `chip` ("GA100", "GH100", ...); empty `active_pct` when the chip is not one of
// the families listed (Volta GV, Turing TU, Ampere GA, Ada AD, Hopper GH): a caller then falls
// back to classifying kernels by name (estimator/kernel_rules.h).
TensorCoreMetrics tensor_core_metrics(std::string_view chip);

}  // namespace plansight::runtime::cuda
