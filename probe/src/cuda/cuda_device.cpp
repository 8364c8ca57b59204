// CudaDevice: one GPU shared by the run's virtual ranks, or, in a launched run (mpirun/srun),
// this process's GPU for its one rank, with NCCL between the processes. The stream-ordered memory pool keeps
// what it frees (release threshold: no limit) so steady-state steps allocate from the cache;
// with tracing, the CUPTI activity tracer starts before the first NVTX range, every rank's
// streams and thread are named to it, and the last step's records become the measured timeline
// (clock-aligned to the host's steady clock, kept from the earliest start of the last step).
// With tensor_core_counters (an untraced run: the request refuses trace true with it, and the
// range profiler and the activity tracer are never used in one process), the last warm-up step of
// a single-rank run is profiled per kernel with CUPTI's kernel replay (runtime/cuda/
// tensor_core_counters.h): a warm-up step is not timed, so its 10-100x slowdown does not touch
// the step time. Each kernel's duration is read with its counters, and the report's tensor-core
// share weighs the same launches by counters (tensor pipe active) and by the kernel-name rules.
#include "plansight/probe/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "backend.h"
#include "cuda_backend.h"
#include "process_gpu.h"
#include "plansight/estimator/kernel_rules.h"
#include "plansight/kernels/cuda/blas.h"
#include "plansight/runtime/cuda/device_communicator.h"
#include "plansight/runtime/cuda/memory_fit.h"
#include "plansight/runtime/cuda/nccl_communicator.h"
#include "plansight/runtime/cuda/nvtx_ranges.h"
#include "tensor_core_share.h"
#if PLANSIGHT_HAVE_CUPTI
#include "plansight/runtime/cuda/activity_tracer.h"
#include "plansight/runtime/cuda/tensor_core_counters.h"
#endif

namespace plansight::probe::cuda {
namespace {

namespace est = plansight::estimator;
namespace rc = plansight::runtime::cuda;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string cuda_error_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

// Counter data for this many kernel launches of the profiled step (a GPT-2 124M step launches
// on the order of a thousand); launches beyond it are reported as dropped, never read as zeros.
constexpr std::size_t kMaxProfiledKernels = 8192;
constexpr const char* kNamesDecide = "; kernels are classified by their names";

class CudaDevice final : public RunDevice {
 public:
  // `nccl` null: every rank of the world is a virtual rank of this GPU (the device communicator);
  // else this process runs one rank of an NCCL world spread over processes.
  CudaDevice(const ProbeRequest& request, int world_size, int device, cudaDeviceProp props, CudaPrecision precision,
             std::shared_ptr<rc::NcclWorld> nccl = nullptr)
      : request_(request), world_size_(world_size), device_(device), props_(props), precision_(precision),
        nccl_(std::move(nccl)),
        last_step_begin_ns_(world_size, std::numeric_limits<std::int64_t>::max()),
        last_step_end_ns_(world_size, std::numeric_limits<std::int64_t>::min()) {
    if (!nccl_) world_.emplace(world_size, device);
    plan_counters();
  }

  ~CudaDevice() override {
    if (nvtx_installed_) rc::remove_range_hooks();
  }

  // Tracing setup; an error is the run's (a tracer that cannot start is not silently skipped).
  Result<bool> start_tracing() {
    if (!request_.trace) return true;
#if PLANSIGHT_HAVE_CUPTI
    auto tracer = rc::ActivityTracer::start();
    if (!tracer) return tracer.errors();
    tracer_ = std::move(*tracer);
    rc::install_nvtx_range_hooks();
    nvtx_installed_ = true;
    return true;
#else
    tracing_note_ = "this build has no CUPTI (PLANSIGHT_ENABLE_CUPTI=OFF): host timers around launches";
    return true;
#endif
  }

  std::string name() const override {
    return "cuda: " + std::string(props_.name) + " (sm_" + std::to_string(props_.major) + std::to_string(props_.minor) +
           ", " + rc::format_bytes(static_cast<std::int64_t>(props_.totalGlobalMem)) + ")";
  }
  bool ranks_share_device() const override { return !nccl_ && world_size_ > 1; }

  Result<std::unique_ptr<Backend>> make_backend(int rank) override {
    auto backend = make_cuda_backend(device_, precision_);
    if (!backend) return backend.errors();
#if PLANSIGHT_HAVE_CUPTI
    if (tracer_) {
      std::lock_guard lock(mutex_);
      timeline_.assign_thread(rc::ActivityTracer::current_thread_id(), rank);
      auto compute = rc::ActivityTracer::stream_id(compute_stream(**backend));
      auto grad = rc::ActivityTracer::stream_id(gradient_stream(**backend));
      if (!compute) return compute.errors();
      if (!grad) return grad.errors();
      const auto dev = static_cast<std::uint32_t>(device_);
      timeline_.assign_stream(dev, *compute, rc::StreamRole{rank, est::Lane::compute, 0});
      timeline_.assign_stream(dev, *grad, rc::StreamRole{rank, est::Lane::communication, 1});
    }
#else
    (void)rank;
#endif
    return backend;
  }

  Result<std::unique_ptr<runtime::Communicator>> world(int rank, Backend& backend) override {
    if (nccl_) return nccl_->world(rank, compute_stream(backend));
    return world_->world(rank, compute_stream(backend));
  }
  Result<std::unique_ptr<runtime::Communicator>> split(runtime::Communicator& parent, int colour, int key,
                                                      const std::string& name, Backend& backend,
                                                      bool gradient_queue) override {
    cudaStream_t stream = gradient_queue ? gradient_stream(backend) : compute_stream(backend);
    if (nccl_) return rc::split_nccl(parent, colour, key, name, stream);
    return rc::split_device(parent, colour, key, name, stream);
  }
  void abort(const std::string& reason) override {
    if (nccl_) nccl_->abort(reason);
    else world_->abort(reason);
  }

  // A new thread's current device is 0 (CUDA Programming Guide, "Device Selection"): without
  // cudaSetDevice a process whose GPU is not 0 would launch the gradient queue's kernels against
  // a stream of another device, and NCCL's group calls would restore device 0 and make a
  // context there.
  Result<bool> thread_started(int rank) override {
    if (const cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) {
      return make_error("device", "cuda: cudaSetDevice(" + std::to_string(device_) + ") on the gradient thread of rank " +
                                      std::to_string(rank) + ": " + cuda_error_text(e));
    }
#if PLANSIGHT_HAVE_CUPTI
    if (!tracer_) return true;
    std::lock_guard lock(mutex_);
    timeline_.assign_thread(rc::ActivityTracer::current_thread_id(), rank);
#endif
    return true;
  }
  // Every step, not only the planned last one: a run stopped early (SIGINT/SIGTERM, Cancel)
  // keeps the last step it ran. Every rank leaves each step through the world's all-reduce, so
  // the ranks' latest marks are of the same step.
  void step_begins(int rank, std::int64_t step, bool) override {
    if (rank == 0 && step == counters_step_) start_counters();  // on the rank's (the only) thread
    std::lock_guard lock(mutex_);
    last_step_begin_ns_[static_cast<std::size_t>(rank)] = steady_ns();
  }
  void step_ends(int rank, std::int64_t step) override {
    if (rank == 0 && step == counters_step_) finish_counters();
    std::lock_guard lock(mutex_);
    last_step_end_ns_[static_cast<std::size_t>(rank)] = steady_ns();
  }

  bool host_spans_are_timeline() const override { return false; }  // CUPTI's records are (device_timeline)
  std::optional<Result<est::Timeline>> device_timeline(const runtime::Tracer&) override {
#if PLANSIGHT_HAVE_CUPTI
    if (!tracer_) return std::nullopt;
    // Every rank's backend synchronised its streams when it was destroyed: all work is done.
    if (auto s = tracer_->flush(); !s) return Result<est::Timeline>(s.errors());
    auto alignment = tracer_->align_with(steady_ns);
    if (!alignment) return Result<est::Timeline>(alignment.errors());
    std::vector<rc::ActivityRecord> records = tracer_->take_records();
    dropped_records_ = tracer_->dropped_records();
    const std::int64_t begin = *std::min_element(last_step_begin_ns_.begin(), last_step_begin_ns_.end());
    const std::int64_t end = *std::max_element(last_step_end_ns_.begin(), last_step_end_ns_.end());
    // The last step's records only: those that start once its first rank began it and before its
    // last rank ended it (not the backends' teardown synchronisations after it).
    const bool ended = end != std::numeric_limits<std::int64_t>::min();  // a rank marked the end
    std::erase_if(records, [&](const rc::ActivityRecord& r) {
      const std::int64_t t = alignment->to_cpu_ns(r.start_ns);
      return t < begin || (ended && t > end);
    });
    timeline_.set_clock_offset_ns(alignment->offset_ns);
    est::Timeline timeline = timeline_.build(records, "probe " + request_.model.name + ", last step (CUPTI)",
                                             est::KernelClassifier());
    tensor_cores_ = tensor_core_share(timeline);
    tensor_cores_->counters_note = counters_note_ + kNamesDecide;  // a traced run reads no counters
    return Result<est::Timeline>(std::move(timeline));
#else
    return std::nullopt;
#endif
  }

  nlohmann::json report() const override {
    nlohmann::json r = {{"api", "cuda"},
                        {"gpu", props_.name},
                        {"compute_capability", std::to_string(props_.major) + "." + std::to_string(props_.minor)},
                        {"multiprocessors", props_.multiProcessorCount},
                        {"memory_bytes", static_cast<double>(props_.totalGlobalMem)},
                        {"precision", to_string(request_.precision)},
                        {"device_index", device_}};
    if (nccl_) r["communicator"] = "nccl";
    else r["virtual_ranks"] = world_size_;
    int driver = 0, runtime_version = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess) r["driver_api_version"] = driver;
    if (cudaRuntimeGetVersion(&runtime_version) == cudaSuccess) r["runtime_version"] = runtime_version;
    if (!tracing_note_.empty()) r["timeline"] = tracing_note_;
    else if (request_.trace) r["timeline"] = "CUPTI activity records of the last step, phases from NVTX ranges";
    if (dropped_records_ > 0) r["cupti_dropped_records"] = static_cast<double>(dropped_records_);
    // What the GPU held, beside the per-category figures (which count the ranks' tensors only):
    // the stream-ordered pool's high-water marks cover every tensor of every rank on this GPU,
    // the pipeline's send staging and what the pool kept for reuse.
    cudaMemPool_t pool = nullptr;
    std::uint64_t used = 0, reserved = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, device_) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved) == cudaSuccess) {
      const int ranks = nccl_ ? 1 : world_size_;
      r["device_memory"] = {{"pool_peak_used_bytes", static_cast<double>(used)},
                            {"pool_peak_reserved_bytes", static_cast<double>(reserved)},
                            {"blas_workspace_bytes", static_cast<double>(ranks) * static_cast<double>(kernels::cuda::kDefaultBlasWorkspaceBytes)},
                            {"note", "pool peaks: every rank's tensors on this GPU, send staging and what the pool kept; "
                                     "the cuBLASLt workspaces (one per rank) and the CUDA context come on top"}};
    }
    if (tensor_cores_) {
      r["tensor_cores"] = to_json(*tensor_cores_);
    } else if (auto share = counters_share()) {
      r["tensor_cores"] = to_json(*share);  // an untraced run whose step was profiled with counters
    } else if (request_.tensor_core_counters) {
      // Asked for, not read, and no traced timeline to classify by names: say why, in the place
      // a reader looks for the counters.
      r["tensor_cores"] = {{"source", "none: no traced timeline, and hardware counters not read"},
                           {"counters", {{"used", false}, {"note", counters_note_}}}};
    }
    return r;
  }

 private:
  // Which step the counters profile (0-based; -1: none) or, in counters_note_, why none.
  void plan_counters() {
    if (!request_.tensor_core_counters) {
      counters_note_ = "hardware counters not read: not asked for (request field tensor_core_counters)";
      return;
    }
#if PLANSIGHT_HAVE_CUPTI
    // The request refuses this (probe/protocol request.cpp); kept for a request made in code: the
    // counters' kernel replay and launch callbacks are never used beside the activity tracer.
    if (request_.trace) {
      counters_note_ = "hardware counters not read: tensor_core_counters runs with trace false (the counters' kernel "
                       "replay and the CUPTI activity tracer are not used in one process)";
      return;
    }
    // Kernel replay profiles the kernels of one context as one thread launches them (launch order
    // names the ranges), so virtual ranks sharing the GPU, or NCCL ranks, are left out.
    if (world_size_ != 1 || nccl_) {
      counters_note_ = "hardware counters not read: tensor_core_counters profiles a single-rank run on one GPU; this "
                       "run has " + std::to_string(world_size_) + " ranks (tp*pp*dp must be 1)";
      return;
    }
    if (request_.warmup_steps < 1 || request_.steps <= request_.warmup_steps) {
      counters_note_ = "hardware counters not read: the profiled step is the last warm-up step, and this run has " +
                       std::to_string(request_.warmup_steps) + " warm-up step(s) of " + std::to_string(request_.steps) +
                       " (needs warmup_steps >= 1 and steps > warmup_steps)";
      return;
    }
    counters_step_ = request_.warmup_steps - 1;
    counters_note_ = "hardware counters not read: the profiled step " + std::to_string(counters_step_ + 1) + " did not run";
#else
    counters_note_ = "hardware counters not read: this build has no CUPTI (PLANSIGHT_ENABLE_CUPTI=OFF)";
#endif
  }

#if PLANSIGHT_HAVE_CUPTI
  // Failures become the note, never the run's error: the counters are an extra view of a step.
  void start_counters() {
    auto session = rc::KernelCounterSession::start(device_, kMaxProfiledKernels);
    if (!session) {
      counters_note_ = "hardware counters not read: " + session.error_text();
      return;
    }
    counter_session_ = std::move(*session);
  }
  void finish_counters() {
    if (!counter_session_) return;
    auto measured = counter_session_->finish();
    counter_session_.reset();
    if (!measured) counters_note_ = "hardware counters not read: " + measured.error_text();
    else if (!measured->from_counters) counters_note_ = "hardware counters not read: " + measured->fallback_reason;
    else counters_ = std::move(*measured);
  }
#else
  void start_counters() {}
  void finish_counters() {}
#endif

  // The step's tensor-core share from the counters alone (an untraced run): each launch's
  // duration, counters' verdict and name, two classifiers on the same durations; nullopt when no
  // counters were read.
  std::optional<TensorCoreShare> counters_share() const {
#if PLANSIGHT_HAVE_CUPTI
    if (!counters_) return std::nullopt;
    std::vector<CounterReading> readings;
    readings.reserve(counters_->kernels.size());
    for (const rc::KernelTensorCores& k : counters_->kernels) {
      readings.push_back({k.kernel, k.tensor_instructions(), k.tensor_active_pct(), k.duration_s()});
    }
    const std::string step = std::to_string(counters_step_ + 1);
    CounterComparison c = compare_with_counters(readings);
    c.chip = counters_->chip;
    c.profiled_step = counters_step_ + 1;
    c.ranges = counters_->ranges;
    c.dropped_ranges = counters_->dropped_ranges;
    c.passes = counters_->passes;
    c.names_note = counters_->names_note;
    if (c.dropped_ranges > 0) {
      c.note = std::to_string(c.dropped_ranges) + " kernel launches of step " + step + " beyond the counter data's " +
               std::to_string(kMaxProfiledKernels) + " ranges have no counters and no duration; both shares leave them out";
    }
    return tensor_core_share_from_counters(std::move(c));
#else
    return std::nullopt;
#endif
  }

  ProbeRequest request_;
  int world_size_;
  int device_;
  cudaDeviceProp props_;
  CudaPrecision precision_;
  std::shared_ptr<rc::NcclWorld> nccl_;
  std::optional<rc::DeviceWorld> world_;  // virtual ranks (no NCCL world)
  std::mutex mutex_;
  std::vector<std::int64_t> last_step_begin_ns_;
  std::vector<std::int64_t> last_step_end_ns_;
  bool nvtx_installed_ = false;
  std::string tracing_note_;
  std::uint64_t dropped_records_ = 0;
  std::optional<TensorCoreShare> tensor_cores_;
  std::int64_t counters_step_ = -1;  // 0-based step profiled with counters; -1: none
  std::string counters_note_;        // why counters were not read (until they are)
#if PLANSIGHT_HAVE_CUPTI
  std::unique_ptr<rc::ActivityTracer> tracer_;
  rc::ActivityTimeline timeline_;
  // Declared after the tracer: destroyed before it (a run that failed inside the profiled step).
  std::unique_ptr<rc::KernelCounterSession> counter_session_;
  std::optional<rc::PerKernelTensorCores> counters_;
#endif
};

}  // namespace

namespace {

Result<std::unique_ptr<RunDevice>> make_device(const ProbeRequest& request, int world_size, const ProcessRank* process) {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    cudaGetLastError();
    return make_error("device", "cuda: no usable NVIDIA GPU (cudaGetDeviceCount: " + cuda_error_text(e) +
                                    "); is the NVIDIA driver installed? valid here: cpu");
  }
  if (count < 1) return make_error("device", "cuda: the driver reports no CUDA device; valid here: cpu");
  // A launched process takes its GPU by choose_process_gpu (process_gpu.h): device 0 when a
  // per-task binding shows it one, else the one of its local rank; never silently a shared one.
  int device = 0;
  if (process) {
    auto nccl = rc::nccl_runtime();
    if (!nccl) return nccl.errors();
    auto chosen = choose_process_gpu({process->local_rank, process->local_size, count, nccl->multi_rank_gpu.available});
    if (!chosen) return chosen.errors();
    device = *chosen;
  }
  cudaDeviceProp props{};
  if (const cudaError_t e = cudaGetDeviceProperties(&props, device); e != cudaSuccess) {
    return make_error("device", "cuda: cudaGetDeviceProperties: " + cuda_error_text(e));
  }
  CudaPrecision precision;
  switch (request.precision) {
    case Precision::fp32: break;
    case Precision::tf32:
      if (props.major < 8) return make_error("precision", "value tf32: TF32 tensor cores need compute capability 8.0 or newer; this GPU has " + std::to_string(props.major) + "." + std::to_string(props.minor) + "; valid: fp32");
      precision.fp32_math = kernels::cuda::Fp32Math::tf32;
      break;
    case Precision::bf16:
      if (props.major < 8) return make_error("precision", "value bf16: bf16 tensor cores need compute capability 8.0 or newer; valid on this GPU: fp32, fp16");
      precision.act = Elem::bf16;
      break;
    case Precision::fp16:
      // fp16 tensor cores from Volta (7.0); the step runs with dynamic loss scaling (rank_worker).
      if (props.major < 7) return make_error("precision", "value fp16: fp16 tensor cores need compute capability 7.0 or newer; valid on this GPU: fp32");
      precision.act = Elem::f16;
      break;
  }
  // The stream-ordered pool keeps freed memory for reuse instead of returning it to the driver
  // at each synchronisation (CUDA Programming Guide, "Stream Ordered Memory Allocator").
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
    std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    // The high-water marks report() gives are this run's.
    std::uint64_t zero = 0;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero);
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero);
  }
  std::shared_ptr<rc::NcclWorld> nccl;
  if (process) {
    if (auto s = cudaSetDevice(device); s != cudaSuccess) return make_error("device", "cuda: cudaSetDevice(" + std::to_string(device) + "): " + cuda_error_text(s));
    auto joined = rc::NcclWorld::join(process->bootstrap, process->rank, world_size, device);
    if (!joined) return joined.errors();
    nccl = std::move(*joined);
  }
  auto out = std::make_unique<CudaDevice>(request, world_size, device, props, precision, std::move(nccl));
  if (auto s = out->start_tracing(); !s) return s.errors();
  return std::unique_ptr<RunDevice>(std::move(out));
}

}  // namespace

Result<std::unique_ptr<RunDevice>> make_cuda_device(const ProbeRequest& request, int world_size) {
  return make_device(request, world_size, nullptr);
}

Result<std::unique_ptr<RunDevice>> make_cuda_process_device(const ProbeRequest& request, int world_size,
                                                            const ProcessRank& process) {
  return make_device(request, world_size, &process);
}

Result<std::string> make_nccl_bootstrap() { return rc::nccl_unique_id(); }

void register_cuda_probe_device() { register_cuda_device(make_cuda_device); }

}  // namespace plansight::probe::cuda
