// calibrate_gpu (gpu_calibration.h): the sweeps in the order of their value to the time model —
// GEMMs, copies and launch overhead, attention and AdamW, then collectives — on the groups and
// message sizes the request's layout forms, as the CPU calibration chooses them.
#include "plansight/probe/cuda/gpu_calibration.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <set>

#include "gpu_timing.h"

namespace plansight::probe::cuda {
namespace {

namespace est = plansight::estimator;
namespace kc = plansight::kernels::cuda;

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

Result<GpuCalibration> calibrate_gpu(const ProbeRequest& r, const GpuCalibrationOptions& options) {
  auto stopped = [&] { return options.stop != nullptr && options.stop->load(); };
  auto cancelled = [] { return Result<GpuCalibration>(make_error("calibration", "cancelled")); };
  if (auto s = cuda_ok(cudaSetDevice(options.device), "cudaSetDevice(" + std::to_string(options.device) + ")"); !s) {
    return s.errors();
  }
  // The training run before keeps its peak reserved in the stream-ordered pool (its release
  // threshold is unlimited, cuda_device.cpp): given back first, so that the calibration's own
  // buffers (the LM head's output alone is 1.65 GB in fp32 at 8,192 tokens) fit beside it.
  if (cudaMemPool_t pool = nullptr; cudaDeviceGetDefaultMemPool(&pool, options.device) == cudaSuccess) {
    cudaDeviceSynchronize();
    cudaMemPoolTrimTo(pool, 0);
  }
  GpuCalibration out;
  est::HardwareProfile& p = out.profile;
  auto name = gpu_device_name(options.device);
  if (!name) return name.errors();
  p.device = *name;
  p.created_at = utc_now();

  std::unique_ptr<kc::Blas> blas;
  if (kc::Status s = kc::Blas::create(blas); !s) return make_error("calibration", s.message());
  for (const GemmShape& shape : calibration_gemm_shapes(r, options.level)) {
    for (const GemmPrecision& precision : options.precisions) {
      if (stopped()) return cancelled();
      auto sample = measure_gpu_gemm(shape, precision, *blas, options.level);
      if (!sample) return sample.errors();
      p.gemms.push_back(*sample);
      p.peak_flops = std::max(p.peak_flops, sample->seconds > 0 ? sample->flops() / sample->seconds : 0.0);
    }
  }
  blas->set_fp32_math(kc::Fp32Math::strict);

  auto copies = measure_copy_bandwidths(options.level);
  if (!copies) return copies.errors();
  out.copies = *copies;
  p.memory_bandwidth_bytes_per_s = copies->device_to_device;
  auto overhead = measure_launch_overhead(options.level);
  if (!overhead) return overhead.errors();
  p.kernel_overhead_s = *overhead;
  if (stopped()) return cancelled();

  auto attention = measure_gpu_attention(r, options.level, *blas);
  if (!attention) return attention.errors();
  p.attention.push_back(*attention);
  auto optimizer = measure_gpu_optimizer(r, options.level);
  if (!optimizer) return optimizer.errors();
  p.optimizer_bytes_per_s = *optimizer;
  if (stopped()) return cancelled();

  // Groups the run forms, plus pairs; one activation of a micro-batch, one stage's gradients (full
  // level), and a sweep from latency-bound to bandwidth-bound sizes.
  const std::int64_t world = r.layout.tp * r.layout.pp * std::max<std::int64_t>(r.layout.dp, 1);
  std::set<std::int64_t> groups{2};
  for (auto g : {r.layout.tp, r.layout.dp, r.layout.pp, world}) {
    if (g >= 2) groups.insert(g);
  }
  // On HBM 1 MiB moves in about a microsecond, under the host rendezvous of a collective among
  // virtual ranks: the quick sweep reaches 16 MiB so that the fitted bandwidth has a
  // bandwidth-bound sample, and both levels time the DP bucket the run reduces (one layer's
  // fp32 gradients over TP, as the estimator's training.dp_bucket_bytes; probe_plan.cpp).
  std::set<double> sizes = options.level == CalibrationLevel::quick
                               ? std::set<double>{4096.0, 1 << 20, 16 << 20}
                               : std::set<double>{4096.0, 65536.0, 1 << 20, 16 << 20, 64 << 20, 256 << 20};
  sizes.insert(static_cast<double>(r.micro_batch * r.seq_len * r.model.hidden) * 2);  // bf16 activations
  const double h = static_cast<double>(r.model.hidden);
  sizes.insert((12 * h * h + 13 * h) * 4 / static_cast<double>(std::max<std::int64_t>(r.layout.tp, 1)));
  if (options.level == CalibrationLevel::full) {
    const double layer_params = 12.0 * static_cast<double>(r.model.hidden * r.model.hidden);  // Narayanan et al. 2021, eq. 2
    sizes.insert(layer_params * static_cast<double>(r.model.layers) / static_cast<double>(r.layout.tp * r.layout.pp) * 4);
  }
  const std::vector<std::int64_t> group_list(groups.begin(), groups.end());
  const std::vector<double> size_list(sizes.begin(), sizes.end());
  auto device_collectives = measure_device_collectives(group_list, size_list, options.level, options.device, options.stop);
  if (!device_collectives) return device_collectives.errors();
  p.collectives = std::move(*device_collectives);
  int gpus = 0;
  if (auto s = cuda_ok(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount"); !s) return s.errors();
#if defined(PLANSIGHT_HAVE_NCCL)
  if (options.nccl && gpus >= 2) {
    auto nccl = measure_nccl_collectives(group_list, size_list, options.level, options.stop);
    if (!nccl) return nccl.errors();
    p.collectives.insert(p.collectives.end(), nccl->begin(), nccl->end());
  }
#endif
  if (stopped()) return cancelled();
  return out;
}

}  // namespace plansight::probe::cuda
