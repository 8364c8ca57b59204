// KernelLaunchNames (kernel_launch_names.h): a CUPTI subscriber on the launch functions of the
// runtime and the driver. A runtime launch calls the driver inside it, on the same thread, and
// that driver call reaches the callback too, so a per-thread depth counts each launch once:
// at the runtime function's exit, or at a driver launch's exit when no runtime launch encloses
// it (cuBLASLt and other libraries may launch through the driver directly). A launch counts
// only when its function returned success on the measured context (a failed launch runs nothing
// and has no range).
#include "kernel_launch_names.h"

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "cupti_status.h"
#include "plansight/runtime/cuda/kernel_names.h"

namespace plansight::runtime::cuda {

// Guarded by the gate's mutex (below), which outlives it.
struct KernelLaunchNames::Shared {
  CUcontext context = nullptr;
  std::vector<std::string> raw_names;  // as CUPTI gives them (mangled); demangled when read
};

namespace {

constexpr std::array<CUpti_CallbackId, 8> kRuntimeLaunches = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
};
constexpr std::array<CUpti_CallbackId, 9> kDriverLaunches = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

// What the callback reaches, for the life of the process. The callback runs on whichever thread
// launches (a rank's gradient thread as well as the thread that owns the KernelLaunchNames), and
// cuptiUnsubscribe does not say that it waits for callbacks already running on other threads. Had
// the callback's userdata been the session's Shared, a launch on another thread that was inside
// the callback when the session's destructor unsubscribed could lock and push into a Shared
// already freed (a use-after-free, a crash at the end of a profiled step at best). So the
// callback reaches Shared only through this gate, under its mutex: the destructor unsubscribes,
// then clears `target` under the same mutex (waiting for a callback that holds it), and only then
// frees Shared; a callback that comes later finds no target. The gate itself is never freed, so a
// callback during the process's exit finds it too.
struct Gate {
  std::mutex mutex;
  KernelLaunchNames::Shared* target = nullptr;  // the subscribed session's names; null between sessions
  // One per subscription: a thread whose launch was entered under an earlier subscription (its
  // exit never came: unsubscribed in between) starts clean under the next one instead of
  // carrying a launch depth that would hide its driver-level launches.
  std::atomic<std::uint64_t> generation{0};
};

Gate& gate() {
  static Gate* g = new Gate();  // never destroyed, see above
  return *g;
}

// The launch in progress on this thread: entered functions and the kernel each names.
struct ThreadLaunch {
  std::uint64_t generation = 0;
  int runtime_depth = 0;
  int driver_depth = 0;
  std::string runtime_name;
  std::string driver_name;
};
thread_local ThreadLaunch t_launch;

// Counts the launch for the subscribed session when it ran on the session's context.
void record(const CUpti_CallbackData& data, const std::string& name) {
  Gate& g = gate();
  std::lock_guard lock(g.mutex);
  if (g.target != nullptr && data.context == g.target->context) g.target->raw_names.push_back(name);
}

void CUPTIAPI on_launch(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* cbdata) {
  const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
  if (data == nullptr) return;
  ThreadLaunch& t = t_launch;
  if (const std::uint64_t generation = gate().generation.load(std::memory_order_acquire); t.generation != generation) {
    t = ThreadLaunch{};
    t.generation = generation;
  }
  const bool enter = data->callbackSite == CUPTI_API_ENTER;
  // symbolName: "valid only for driver and runtime launch callbacks, where it returns the name
  // of the kernel" (cupti_callbacks.h); read at entry, kept until the exit says how it went.
  const char* symbol = data->symbolName != nullptr ? data->symbolName : "";
  bool succeeded = false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (enter) {
      ++t.runtime_depth;
      t.runtime_name = symbol;
      return;
    }
    if (t.runtime_depth == 0) return;  // entered before the subscription: not ours to count
    --t.runtime_depth;
    succeeded = data->functionReturnValue != nullptr &&
                *static_cast<const cudaError_t*>(data->functionReturnValue) == cudaSuccess;
    if (succeeded) record(*data, t.runtime_name);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || t.runtime_depth > 0) return;  // inside a runtime launch
  if (enter) {
    ++t.driver_depth;
    t.driver_name = symbol;
    return;
  }
  if (t.driver_depth == 0) return;
  --t.driver_depth;
  succeeded = data->functionReturnValue != nullptr &&
              *static_cast<const CUresult*>(data->functionReturnValue) == CUDA_SUCCESS;
  if (succeeded) record(*data, t.driver_name);
}

}  // namespace

Result<std::unique_ptr<KernelLaunchNames>> KernelLaunchNames::start(CUcontext context) {
  std::unique_ptr<KernelLaunchNames> out(new KernelLaunchNames());
  out->shared_ = std::make_unique<Shared>();
  out->shared_->context = context;
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "plansight kernel counters";
  params.oldSubscriberName = other;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  // The callback's userdata is not used (it reaches Shared through the gate).
  if (CUptiResult r = cuptiSubscribe_v2(&out->subscriber_, on_launch, nullptr, &params); r != CUPTI_SUCCESS) {
    out->subscriber_ = nullptr;
    Diagnostic d = cupti_failure(r, "cuptiSubscribe_v2");
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && other[0] != '\0') {
      d.message += "; the subscriber already there: " + std::string(other);
    }
    return d;
  }
  // Subscribed (CUPTI allows one subscriber, so no other KernelLaunchNames is live), no callback
  // enabled yet: the gate points at this session's names before any launch can be counted.
  {
    Gate& g = gate();
    std::lock_guard lock(g.mutex);
    g.target = out->shared_.get();
    g.generation.fetch_add(1, std::memory_order_release);
  }
  const auto enable = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    return cupti_check(cuptiEnableCallback(1, out->subscriber_, domain, cbid),
                       "cuptiEnableCallback(domain " + std::to_string(static_cast<int>(domain)) + ", callback " +
                           std::to_string(static_cast<int>(cbid)) + ")");
  };
  for (CUpti_CallbackId cbid : kRuntimeLaunches) {
    if (auto s = enable(CUPTI_CB_DOMAIN_RUNTIME_API, cbid); !s) return s.errors();  // ~ unsubscribes
  }
  for (CUpti_CallbackId cbid : kDriverLaunches) {
    if (auto s = enable(CUPTI_CB_DOMAIN_DRIVER_API, cbid); !s) return s.errors();
  }
  return out;
}

KernelLaunchNames::~KernelLaunchNames() {
  // cuptiUnsubscribe also disables this subscriber's callbacks; its result cannot be acted on here.
  if (subscriber_ != nullptr) cuptiUnsubscribe(subscriber_);
  // Then the gate forgets Shared, under its mutex: a callback still running on another thread
  // finishes its push first, and later ones find no target. Only then is shared_ freed (after
  // this body). A session whose subscription failed never set the target, so it clears only its own.
  Gate& g = gate();
  std::lock_guard lock(g.mutex);
  if (g.target == shared_.get()) g.target = nullptr;
}

std::vector<std::string> KernelLaunchNames::names() const {
  std::vector<std::string> raw;
  {
    std::lock_guard lock(gate().mutex);
    raw = shared_->raw_names;
  }
  std::vector<std::string> out;
  out.reserve(raw.size());
  for (const auto& r : raw) out.push_back(kernel_display_name(r.empty() ? nullptr : r.c_str()));
  return out;
}

std::size_t KernelLaunchNames::launches() const {
  std::lock_guard lock(gate().mutex);
  return shared_->raw_names.size();
}

}  // namespace plansight::runtime::cuda
