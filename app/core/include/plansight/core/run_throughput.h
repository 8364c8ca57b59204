// Tokens per second and MFU of a measured run beside its prediction. MFU is model FLOPs (no
// recomputation: Chowdhery et al. 2022, PaLM, App. B) over the step time, the physical GPUs and
// the GPU's datasheet peak in the run's precision, for the predicted and the measured step alike,
// so the two read on one scale. The peak is the datasheet's, not the calibration's fastest GEMM:
// MFU is the figure users compare across tools and papers, and those use the datasheet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "plansight/estimator/cluster_spec.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::core {

// The GPU preset (assets/presets/gpus.json) of a device as the CUDA runtime names it, with or
// without the probe's " (sm_90, 132 SMs, 139.8 GiB)" tail: "NVIDIA H200", "NVIDIA H100 80GB HBM3"
// (SXM5), "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB", "NVIDIA L4", ...
// None for a CPU, an unknown GPU, or a variant no preset describes (H100 NVL, RTX cards).
std::optional<estimator::GpuSpec> datasheet_gpu(std::string_view device);

struct RunThroughput {
  double predicted_tokens_per_s = 0;
  double measured_tokens_per_s = 0;
  std::optional<double> predicted_mfu;  // none when `mfu_note` says why
  std::optional<double> measured_mfu;
  double peak_flops_per_gpu = 0;        // the datasheet's dense peak in the run's precision
  std::int64_t gpus = 0;                // physical GPUs: virtual ranks sharing one count once
  std::string peak_source;              // "h200 datasheet, bf16 dense 989.4 TFLOP/s x 1 GPU"
  std::string mfu_note;                 // why there is no MFU (a CPU run, an unknown GPU)
};

// `device`: the GPU's name (a probe run's plan.cluster.gpu.name). Steps in seconds; a step <= 0
// gives 0 tokens/s and no MFU on that side.
RunThroughput run_throughput(const estimator::Plan& plan, const estimator::Estimate& estimate, double predicted_step_s,
                             double measured_step_s, std::string_view device);

}  // namespace plansight::core
