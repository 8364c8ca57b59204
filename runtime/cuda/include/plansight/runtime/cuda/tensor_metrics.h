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

// The metrics for `chip` ("GA100", "GH100", ...); empty `active_pct` when the chip is not one of
// the families listed (Volta GV, Turing TU, Ampere GA, Ada AD, Hopper GH): a caller then falls
// back to classifying kernels by name (estimator/kernel_rules.h).
TensorCoreMetrics tensor_core_metrics(std::string_view chip);

}  // namespace plansight::runtime::cuda
