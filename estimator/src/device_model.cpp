// GEMM, memory-bound and attention kernel times on one GPU. See device_model.h; the numbers of
// default_efficiency() are documented in docs/time-model-sources.md; the per-GPU ones live in
// the GPU presets (assets/presets/gpus.json).
#include "plansight/estimator/device_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace plansight::estimator {
namespace {

struct Tile {
  double rows, cols, relative_efficiency;
};

// cuBLAS's typical thread-block tiles, largest first (Matrix Multiplication Background User's
// Guide, Sec. 2.3: larger tiles reuse more data and run closer to peak; 256x128 is the most
// efficient, 64x64 the least). The relative per-SM rates are documented in
// docs/time-model-sources.md.
constexpr Tile kTiles[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.93},
                           {256, 64, 0.85}, {64, 256, 0.85}, {128, 64, 0.80},
                           {64, 128, 0.80}, {64, 64, 0.62}};

double ceil_div(double a, double b) { return std::ceil(a / b); }

// Tensor Cores want the contiguous dimensions to be multiples of 16 bytes (8 fp16 elements);
// cuBLAS 11+ still runs other sizes, but on slower paths (User's Guide Sec. 2.2 and Fig. 2).
double alignment_factor(double n, double k, double element_bytes) {
  auto aligned = [&](double d) { return std::fmod(d * element_bytes, 16.0) == 0.0; };
  if (aligned(n) && aligned(k)) return 1.0;
  return 0.5;
}

double distance(const GemmSample& s, double m, double n, double k, double batch) {
  auto l = [](double x) { return std::log2(std::max(x, 1.0)); };
  return std::fabs(l(static_cast<double>(s.m)) - l(m)) + std::fabs(l(static_cast<double>(s.n)) - l(n)) +
         std::fabs(l(static_cast<double>(s.k)) - l(k)) + std::fabs(l(static_cast<double>(s.batch)) - l(batch));
}

}  // namespace

DeviceModel::DeviceModel(const GpuSpec& gpu, Precision precision, DeviceEfficiency efficiency,
                         const HardwareProfile* profile)
    : gpu_(gpu), precision_(precision), efficiency_(efficiency), profile_(profile) {
  peak_flops_ = gpu.peak_flops(precision);
  if (profile_ && profile_->peak_flops > 0) {
    // The measured peak of this precision: the fastest GEMM sampled in it. The profile's overall
    // peak is the fastest of any precision, which on a GPU is a tensor-core (bf16) rate about
    // 15x an fp32 one; it stands in only where no GEMM of this precision was measured (a CPU's
    // one precision, an older profile).
    double best = 0;
    for (const GemmSample& g : profile_->gemms) {
      if (g.precision == precision && g.seconds > 0) best = std::max(best, g.flops() / g.seconds);
    }
    peak_flops_ = best > 0 ? best : profile_->peak_flops;
  }
  element_bytes_ = precision == Precision::fp32 || precision == Precision::tf32 ? 4.0 : (precision == Precision::fp8 ? 1.0 : 2.0);
  if (profile_ && profile_->kernel_overhead_s >= 0) efficiency_.kernel_overhead_s = profile_->kernel_overhead_s;
  if (profile_ && profile_->memory_bandwidth_bytes_per_s > 0 && gpu_.hbm_bandwidth_bytes_per_s > 0) {
    efficiency_.memory_fraction = profile_->memory_bandwidth_bytes_per_s / gpu_.hbm_bandwidth_bytes_per_s;
  } else if (profile_ && profile_->memory_bandwidth_bytes_per_s > 0) {
    gpu_.hbm_bandwidth_bytes_per_s = profile_->memory_bandwidth_bytes_per_s;
    efficiency_.memory_fraction = 1.0;
  }
}

namespace {

// The fastest candidate tile for C[m,n] = A[m,k] B[k,n] x batch at `rate` FLOP/s: tile and wave
// quantization, every tile costing a full tile of work and tiles running in waves of one per SM.
// Returns the compute seconds; `tiling` receives the tile's figures.
double tiled_compute_seconds(double m, double n, double k, double batch, double rate, double sms, GemmTiling& tiling) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& t : kTiles) {
    const double tiles = ceil_div(m, t.rows) * ceil_div(n, t.cols) * batch;
    const double waves = ceil_div(tiles, sms);
    const double seconds = waves * 2 * t.rows * t.cols * k / (rate / sms * t.relative_efficiency);
    if (seconds < best) {
      best = seconds;
      tiling.tile_rows = t.rows, tiling.tile_cols = t.cols, tiling.tiles = tiles, tiling.waves = waves;
    }
  }
  tiling.tile_fill = m * n * batch / (tiling.tiles * tiling.tile_rows * tiling.tile_cols);
  tiling.wave_fill = tiling.tiles / (tiling.waves * sms);
  return best;
}

}  // namespace

GemmTiling DeviceModel::gemm_tiling(double m, double n, double k, double batch) const {
  GemmTiling tiling;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return tiling;
  tiling.aligned = alignment_factor(n, k, element_bytes_) == 1.0;
  if (gpu_.sm_count > 0 && peak_flops_ > 0) {
    tiled_compute_seconds(m, n, k, batch, peak_flops_, static_cast<double>(gpu_.sm_count), tiling);
  }
  return tiling;
}

double DeviceModel::modelled_gemm_seconds(double m, double n, double k, double batch) const {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || peak_flops_ <= 0) return 0;
  const double rate = peak_flops_ * efficiency_.gemm_peak_fraction * alignment_factor(n, k, element_bytes_);
  double compute = 0;
  if (gpu_.sm_count > 0) {
    GemmTiling tiling;
    compute = tiled_compute_seconds(m, n, k, batch, rate, static_cast<double>(gpu_.sm_count), tiling);
  } else {
    compute = 2 * m * n * k * batch / rate;
  }
  const double memory = gemm_bytes(m, n, k, batch) / (gpu_.hbm_bandwidth_bytes_per_s * efficiency_.memory_fraction);
  return std::max(compute, memory) * efficiency_.in_step_slowdown + efficiency_.kernel_overhead_s;
}

double DeviceModel::gemm_bytes(double m, double n, double k, double batch) const {
  return (m * k + k * n + m * n) * batch * element_bytes_;
}

double DeviceModel::gemm_seconds(double m, double n, double k, double batch) const {
  const double modelled = modelled_gemm_seconds(m, n, k, batch);
  if (!profile_ || profile_->gemms.empty() || modelled <= 0) return modelled;
  // Calibrate: scale the model by measured/modelled at the nearest measured shape.
  const GemmSample* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& s : profile_->gemms) {
    if (s.precision != precision_ || s.seconds <= 0) continue;
    const double d = distance(s, m, n, k, batch);
    if (d < best) {
      best = d;
      nearest = &s;
    }
  }
  if (!nearest) return modelled;
  const double at_sample = modelled_gemm_seconds(static_cast<double>(nearest->m), static_cast<double>(nearest->n),
                                                 static_cast<double>(nearest->k), static_cast<double>(nearest->batch));
  return at_sample > 0 ? modelled * nearest->seconds / at_sample : modelled;
}

double DeviceModel::memory_seconds(double bytes) const {
  if (bytes <= 0) return 0;
  const double bandwidth = gpu_.hbm_bandwidth_bytes_per_s * efficiency_.memory_fraction;
  return efficiency_.kernel_overhead_s + (bandwidth > 0 ? bytes / bandwidth * efficiency_.in_step_slowdown : 0);
}

std::string_view elementwise_kind_name(ElementwiseKind kind) {
  switch (kind) {
    case ElementwiseKind::norm_forward: return "norm_forward";
    case ElementwiseKind::norm_backward: return "norm_backward";
    case ElementwiseKind::residual_forward: return "residual_forward";
    case ElementwiseKind::residual_backward: return "residual_backward";
    case ElementwiseKind::activation_forward: return "activation_forward";
    case ElementwiseKind::activation_backward: return "activation_backward";
    case ElementwiseKind::softmax_forward: return "softmax_forward";
    case ElementwiseKind::softmax_backward: return "softmax_backward";
    case ElementwiseKind::dropout_forward: return "dropout_forward";
    case ElementwiseKind::dropout_backward: return "dropout_backward";
    case ElementwiseKind::cross_entropy_forward: return "cross_entropy_forward";
    case ElementwiseKind::cross_entropy_backward: return "cross_entropy_backward";
    case ElementwiseKind::embedding_forward: return "embedding_forward";
    case ElementwiseKind::embedding_backward: return "embedding_backward";
    case ElementwiseKind::rotary_forward: return "rotary_forward";
    case ElementwiseKind::rotary_backward: return "rotary_backward";
  }
  return "?";
}

double DeviceModel::elementwise_seconds(ElementwiseKind kind, double bytes) const {
  if (bytes <= 0) return 0;
  if (profile_) {
    const auto it = profile_->elementwise_bytes_per_s.find(std::string(elementwise_kind_name(kind)));
    // A measured rate is already what the kernel achieved, so no in-step slowdown on top (as a
    // calibrated GEMM reproduces its measured seconds).
    if (it != profile_->elementwise_bytes_per_s.end() && it->second > 0) {
      return efficiency_.kernel_overhead_s + bytes / it->second;
    }
  }
  return memory_seconds(bytes);
}

bool DeviceModel::has_fused_attention() const {
  if (!profile_) return false;
  return std::any_of(profile_->attention.begin(), profile_->attention.end(),
                     [](const AttentionSample& a) { return a.forward_s > 0 && a.backward_s > 0; });
}

double DeviceModel::fused_attention_seconds(double batch_heads, double seq, double head_dim, bool backward) const {
  if (!has_fused_attention() || batch_heads <= 0 || seq <= 0 || head_dim <= 0) return 0;
  auto l = [](double x) { return std::log2(std::max(x, 1.0)); };
  const AttentionSample* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& a : profile_->attention) {
    if (a.forward_s <= 0 || a.backward_s <= 0) continue;
    // The sequence counts twice: the work grows with its square.
    const double d = std::fabs(l(static_cast<double>(a.batch_heads)) - l(batch_heads)) +
                     2 * std::fabs(l(static_cast<double>(a.seq)) - l(seq)) +
                     std::fabs(l(static_cast<double>(a.head_dim)) - l(head_dim));
    if (d < best) {
      best = d;
      nearest = &a;
    }
  }
  const double scale = batch_heads * seq * seq * head_dim / nearest->work();
  return (backward ? nearest->backward_s : nearest->forward_s) * scale;
}

double DeviceModel::optimizer_seconds(double bytes) const {
  if (bytes <= 0) return 0;
  if (profile_ && profile_->optimizer_bytes_per_s > 0) return efficiency_.kernel_overhead_s + bytes / profile_->optimizer_bytes_per_s;
  return memory_seconds(bytes);
}

double DeviceModel::flash_attention_seconds(double flops, bool backward) const {
  if (flops <= 0 || peak_flops_ <= 0) return 0;
  const double fraction = backward ? efficiency_.flash_backward_fraction : efficiency_.flash_forward_fraction;
  return efficiency_.kernel_overhead_s + flops / (peak_flops_ * fraction) * efficiency_.in_step_slowdown;
}

DeviceEfficiency default_efficiency(const GpuSpec& gpu) {
  // Every figure: docs/time-model-sources.md (item numbers in brackets). What differs between
  // GPUs (GEMM, attention and NVLink fractions) comes with the GPU (GpuSpec::efficiency, set by
  // its preset in assets/presets/gpus.json with its sources); what follows holds for all.
  DeviceEfficiency e;
  e.gemm_peak_fraction = gpu.efficiency.gemm_peak_fraction;
  e.flash_forward_fraction = gpu.efficiency.flash_forward_fraction;
  e.flash_backward_fraction = gpu.efficiency.flash_backward_fraction;
  e.nvlink_fraction = gpu.efficiency.nvlink_fraction;
  // [4] BabelStream-class copies reach ~85% of HBM.
  e.memory_fraction = 0.85;
  e.kernel_overhead_s = 4e-6;  // [5]
  // One end-to-end calibration per GPU (GpuEfficiency::in_step_slowdown, with its source in the
  // preset). A100: Korthikanti et al. 2022 (abstract) report 42.1% MFU for the 530B GPT on 2240
  // A100s with full recomputation (TP 8, PP 35, v 3). Kernels costed alone give 47.9% there; a
  // 1.15 slowdown of every compute kernel gives 42.2%. Narayanan et al. 2021 Table 1 is not used
  // to set it and is predicted within 10% on all ten rows (validation test). A GPU without a
  // step-level measurement of its own keeps 1.15; the probe's calibration on the machine itself
  // supersedes it.
  e.in_step_slowdown = gpu.efficiency.in_step_slowdown;
  e.network_fraction = 0.9;    // [8] large messages reach ~95% of the NIC line rate; 0.9 allows for mid-size buckets
  return e;
}

}  // namespace plansight::estimator
