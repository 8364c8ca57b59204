// GPU calibration: measures one GPU as the estimator's time model sees a device — cuBLASLt GEMM
// throughput at the requested model's shapes in each training precision, device-to-device copy
// bandwidth, host<->device bandwidth from pinned and from pageable memory, per-kernel overhead,
// the attention and AdamW kernels at the run's shapes, and collective bandwidth by size and group
// (virtual ranks on this GPU through the device communicator; NCCL across GPUs when built and
// present) — into an estimator::HardwareProfile, as probe/src/calibration.cpp does for the CPU.
// Every figure is a median over trials timed with CUDA events (or, for collectives, over the
// slowest rank's wall time, since a collective is done when its last member is).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/kernels/cuda/blas.h"
#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/probe/calibration.h"
#include "plansight/probe/protocol/request.h"

namespace plansight::probe::cuda {

// A GEMM precision: the element type and, for fp32 data, strict or TF32 math.
struct GemmPrecision {
  kernels::cuda::DType dtype = kernels::cuda::DType::bf16;
  kernels::cuda::Fp32Math fp32_math = kernels::cuda::Fp32Math::strict;
  estimator::Precision precision() const;  // bf16, fp16, tf32 or fp32
};

// bf16, fp16, tf32, fp32: what a plan may train in.
std::vector<GemmPrecision> default_gemm_precisions();

struct CopyBandwidths {  // bytes per second
  double device_to_device = 0;  // read + written, as STREAM's copy (and the CPU calibration) count
  double host_to_device_pinned = 0;
  double host_to_device_pageable = 0;
  double device_to_host_pinned = 0;
  double device_to_host_pageable = 0;
};

struct GpuCalibrationOptions {
  CalibrationLevel level = CalibrationLevel::full;
  int device = 0;
  std::vector<GemmPrecision> precisions = default_gemm_precisions();
  bool nccl = true;  // also sweep NCCL across GPUs when this build has NCCL and there are >= 2 GPUs
  const std::atomic<bool>* stop = nullptr;
};

struct GpuCalibration {
  estimator::HardwareProfile profile;
  CopyBandwidths copies;  // the host<->device figures have no HardwareProfile field yet
};

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)", or the CUDA error.
Result<std::string> gpu_device_name(int device);

// One GEMM C[m,n] = A[m,k] B[k,n] (the matmul twin's forward) at `precision` on the current
// device, as the GPU runs it queued back to back (gpu_timing.h).
Result<estimator::GemmSample> measure_gpu_gemm(const GemmShape& shape, const GemmPrecision& precision,
                                               kernels::cuda::Blas& blas, CalibrationLevel level);

Result<CopyBandwidths> measure_copy_bandwidths(CalibrationLevel level);

// Seconds of one launch of a one-element kernel, queued back to back and timed on the GPU (the
// overhead the time model adds per kernel: the GPU's gap between kernels and a kernel's least
// time; what the host needs to enqueue it is not in it, gpu_timing.h).
Result<double> measure_launch_overhead(CalibrationLevel level);

// The attention twin (bf16) at the run's per-TP-rank shape, forward and backward.
Result<estimator::AttentionSample> measure_gpu_attention(const ProbeRequest& request, CalibrationLevel level,
                                                         kernels::cuda::Blas& blas);

// AdamW with fp32 master weights writing a bf16 copy over one layer's parameters on one TP rank,
// as bytes the time model charges (optimizer_bytes_per_parameter of a bf16 plan) per second.
Result<double> measure_gpu_optimizer(const ProbeRequest& request, CalibrationLevel level);

// Collectives among `ranks` virtual ranks on this GPU (device communicator), for each size in
// `bytes` (nccl-tests' S). Errors name the failing collective.
Result<std::vector<estimator::CollectiveSample>> measure_device_collectives(const std::vector<std::int64_t>& ranks,
                                                                           const std::vector<double>& bytes,
                                                                           CalibrationLevel level, int device,
                                                                           const std::atomic<bool>* stop = nullptr);

// The same over NCCL with one rank per GPU (groups up to the GPU count); an error when this build
// has no NCCL.
Result<std::vector<estimator::CollectiveSample>> measure_nccl_collectives(const std::vector<std::int64_t>& ranks,
                                                                         const std::vector<double>& bytes,
                                                                         CalibrationLevel level,
                                                                         const std::atomic<bool>* stop = nullptr);

// Everything above for `request`; peak_flops is the best GEMM throughput measured.
Result<GpuCalibration> calibrate_gpu(const ProbeRequest& request, const GpuCalibrationOptions& options = {});

}  // namespace plansight::probe::cuda
