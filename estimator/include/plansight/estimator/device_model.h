// DeviceModel: seconds for the kernels of a training step on one GPU. GEMMs follow NVIDIA's
// tile and wave quantization model (Matrix Multiplication Background User's Guide, Ch. 3):
// the output is cut into tiles, tiles run in waves of one per SM, and the best of cuBLAS's
// typical tile shapes is chosen; memory-bound kernels move bytes at an achievable fraction of
// HBM bandwidth. A measured HardwareProfile, when given, replaces the modelled efficiency.
#pragma once

#include <string_view>

#include "plansight/estimator/cluster_spec.h"
#include "plansight/estimator/enums.h"
#include "plansight/estimator/hardware_profile.h"

namespace plansight::estimator {

// Achievable fractions of the datasheet peaks; defaults per GPU generation in device_model.cpp,
// each with its source.
struct DeviceEfficiency {
  double gemm_peak_fraction = 0.8;       // large, well-shaped GEMMs
  double memory_fraction = 0.85;         // streaming kernels vs HBM peak
  double kernel_overhead_s = 4e-6;       // launch + tail per kernel
  double flash_forward_fraction = 0.6;   // FlashAttention forward vs dense peak
  double flash_backward_fraction = 0.45; // FlashAttention backward vs dense peak
  double nvlink_fraction = 0.8;          // NCCL bus bandwidth vs NVLink one-direction bandwidth
  double network_fraction = 0.9;         // NCCL bus bandwidth vs NIC line rate
  // Kernels inside a real training step run slower than the same kernels measured alone
  // (NCCL kernels sharing SMs, launch gaps, small unmodelled kernels, sustained clocks): every
  // compute time is multiplied by this factor. Derived from one published end-to-end
  // measurement, documented in default_efficiency().
  double in_step_slowdown = 1.0;
};

// The GPU's own fractions (GpuSpec::efficiency, from its preset) and the figures that hold for
// every GPU (memory, launch overhead, in-step slowdown, network).
DeviceEfficiency default_efficiency(const GpuSpec& gpu);

// The element-wise kernels of a step, forward and backward apart, so that a measured profile can
// give each its own throughput (HardwareProfile::elementwise_bytes_per_s, keyed by the name).
enum class ElementwiseKind {
  norm_forward, norm_backward,
  residual_forward, residual_backward,      // bias + dropout + residual add
  activation_forward, activation_backward,  // GeLU / SwiGLU
  softmax_forward, softmax_backward,        // attention scale-mask-softmax
  dropout_forward, dropout_backward,        // attention dropout
  cross_entropy_forward, cross_entropy_backward,
  embedding_forward, embedding_backward,    // lookup (+ positions); gradient scatter
  rotary_forward, rotary_backward,
};
std::string_view elementwise_kind_name(ElementwiseKind kind);  // "norm_forward", ...

// How a GEMM maps onto the GPU in the time model (DeviceModel::gemm_tiling): the output tile
// it is costed with, how many tiles and waves of one tile per SM, and what the quantization
// wastes (NVIDIA's Matrix Multiplication Background guide, "Tile quantization" and "Wave
// quantization"): a hidden size of 772 instead of 768 adds a row of mostly empty tiles and leaves
// the operands off the 16-byte alignment Tensor Cores want.
struct GemmTiling {
  double tile_rows = 0, tile_cols = 0;  // 0: no SM count, costed without tiles
  double tiles = 0, waves = 0;          // tiles of all `batch` GEMMs; waves of one tile per SM
  double tile_fill = 1;                 // m n batch / (tiles x tile area): useful share of the tiles
  double wave_fill = 1;                 // tiles / (waves x SMs): share of the last waves' SMs busy
  bool aligned = true;                  // n and k rows a multiple of 16 bytes (else half speed)
};

class DeviceModel {
 public:
  DeviceModel(const GpuSpec& gpu, Precision precision, DeviceEfficiency efficiency,
              const HardwareProfile* profile = nullptr);

  // C[m,n] = A[m,k] B[k,n], `batch` times (batched GEMM); operands in the compute precision.
  double gemm_seconds(double m, double n, double k, double batch = 1) const;
  // The tiling gemm_seconds costs that GEMM with (the fastest of its candidate tiles).
  GemmTiling gemm_tiling(double m, double n, double k, double batch = 1) const;
  // The HBM bytes such a GEMM moves when each operand is read once and the output written once
  // (the memory side of gemm_seconds' roofline): (mk + kn + mn) * batch * element_bytes().
  double gemm_bytes(double m, double n, double k, double batch = 1) const;
  // A kernel that streams `bytes` through HBM.
  double memory_seconds(double bytes) const;
  // An element-wise kernel of `kind` charged `bytes`: kernel overhead + bytes at the profile's
  // measured rate for that kind; without one, exactly memory_seconds(bytes).
  double elementwise_seconds(ElementwiseKind kind, double bytes) const;
  // FlashAttention-style fused attention of `flops` (already halved for causal masking).
  double flash_attention_seconds(double flops, bool backward) const;
  // Whether the profile measured a fused standard-attention kernel, and its time at this shape:
  // the nearest sample's seconds scaled by the score products (batch_heads * seq^2 * head_dim).
  bool has_fused_attention() const;
  double fused_attention_seconds(double batch_heads, double seq, double head_dim, bool backward) const;
  // The optimizer step over `bytes` (the time model's bytes): the profile's measured rate, or a
  // streaming kernel.
  double optimizer_seconds(double bytes) const;

  double peak_flops() const { return peak_flops_; }
  // The datasheet HBM bandwidth (a measured profile's when the GPU gives none): the roofline's
  // memory slope; memory_seconds() runs at efficiency().memory_fraction of it.
  double hbm_bandwidth_bytes_per_s() const { return gpu_.hbm_bandwidth_bytes_per_s; }
  // Bytes per GEMM operand element: 4 in fp32/tf32, 1 in fp8, 2 otherwise.
  double element_bytes() const { return element_bytes_; }
  const DeviceEfficiency& efficiency() const { return efficiency_; }

 private:
  double modelled_gemm_seconds(double m, double n, double k, double batch) const;

  GpuSpec gpu_;
  Precision precision_;
  DeviceEfficiency efficiency_;
  const HardwareProfile* profile_;
  double peak_flops_ = 0;
  double element_bytes_ = 2;
};

}  // namespace plansight::estimator
