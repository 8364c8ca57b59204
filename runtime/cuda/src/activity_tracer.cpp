// ActivityTracer (activity_tracer.h). CUPTI's buffer callbacks are plain functions without a user
// pointer, so they reach the running tracer through one process-wide pointer; a buffer that
// completes after the tracer stopped is freed unread. Buffers are reused from a small pool, so
// a rank thread that triggers a buffer request does not wait on malloc of 8 MiB.
#include "plansight/runtime/cuda/activity_tracer.h"

#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cupti_records.h"
#include "driver_context.h"
#include "cupti_status.h"

namespace plansight::runtime::cuda {

struct ActivityTracer::Shared {
  std::size_t buffer_bytes = 0;
  std::mutex mutex;  // guards everything below
  std::vector<std::uint8_t*> free_buffers;
  CuptiRecordConverter converter;
  std::vector<ActivityRecord> records;
  std::uint64_t dropped = 0;
};

namespace {

// CUPTI requires 8-byte aligned buffers (cupti_activity.h, CUpti_BuffersCallbackRequestFunc).
constexpr std::size_t kBufferAlignment = 8;

std::mutex g_mutex;
std::shared_ptr<ActivityTracer::Shared> g_active;  // the running tracer's state, or null

std::shared_ptr<ActivityTracer::Shared> active() {
  std::lock_guard lock(g_mutex);
  return g_active;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *max_records = 0;
  *buffer = nullptr;
  *size = 0;
  auto shared = active();
  if (!shared) return;  // CUPTI drops the records of a null buffer
  {
    std::lock_guard lock(shared->mutex);
    if (!shared->free_buffers.empty()) {
      *buffer = shared->free_buffers.back();
      shared->free_buffers.pop_back();
    }
  }
  if (*buffer == nullptr) *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, shared->buffer_bytes));
  if (*buffer != nullptr) *size = shared->buffer_bytes;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid_bytes) {
  auto shared = active();
  if (!shared) {
    std::free(buffer);
    return;
  }
  std::vector<ActivityRecord> decoded;
  std::size_t dropped = 0;
  {
    std::lock_guard lock(shared->mutex);  // the converter keeps open NVTX ranges across buffers
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
      shared->converter.add(record, decoded);
    }
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) shared->dropped += dropped;
    shared->records.insert(shared->records.end(), std::make_move_iterator(decoded.begin()),
                           std::make_move_iterator(decoded.end()));
    shared->free_buffers.push_back(buffer);
  }
}

// Points NVTX at the loaded libcupti (found with dladdr on one of its functions) unless the
// environment already names an injection library. NVTX reads the variable at the process's first
// NVTX call, so this helps only when the tracer starts before any range is pushed.
void point_nvtx_at_cupti() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  // The loaded libcupti, found by name among the process's objects: dladdr on one of its
  // functions names the executable instead when the executable is not position-independent
  // (the address is its PLT stub), and NVTX would then inject nothing, silently.
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* out) {
        const char* name = object->dlpi_name;
        if (name == nullptr || std::strstr(name, "libcupti.so") == nullptr) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &path);
  if (path.empty()) {  // linked statically: the object that holds CUPTI's code
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&cuptiGetTimestamp), &info) != 0 && info.dli_fname != nullptr) path = info.dli_fname;
  }
  if (!path.empty()) setenv("NVTX_INJECTION64_PATH", path.c_str(), 0);
}

}  // namespace

std::uint32_t ActivityTracer::current_thread_id() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

Result<std::uint32_t> ActivityTracer::stream_id(cudaStream_t stream) {
  auto ctx = current_context();
  if (!ctx) return ctx.errors();
  std::uint32_t id = 0;
  if (auto s = cupti_check(cuptiGetStreamIdEx(*ctx, reinterpret_cast<CUstream>(stream), 0, &id), "cuptiGetStreamIdEx"); !s) {
    return s.errors();
  }
  return id;
}

Result<std::unique_ptr<ActivityTracer>> ActivityTracer::start(const ActivityTracerOptions& options) {
  if (options.buffer_bytes < 1024 || options.buffer_bytes % kBufferAlignment != 0) {
    return make_error("activity_tracer.buffer_bytes", "is " + std::to_string(options.buffer_bytes) +
                                                          "; valid: a multiple of 8, at least 1024");
  }
  std::unique_ptr<ActivityTracer> tracer(new ActivityTracer());
  tracer->shared_ = std::make_shared<Shared>();
  tracer->shared_->buffer_bytes = options.buffer_bytes;
  {
    std::lock_guard lock(g_mutex);
    if (g_active) return make_error("activity_tracer", "another ActivityTracer is running in this process");
    g_active = tracer->shared_;
  }
  auto fail = [&](const Result<bool>& status) -> Result<std::unique_ptr<ActivityTracer>> {
    std::lock_guard lock(g_mutex);
    g_active.reset();
    return status.errors();
  };
  if (auto s = cupti_check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType"); !s) {
    return fail(s);
  }
  if (auto s = cupti_check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                           "cuptiActivityRegisterCallbacks");
      !s) {
    return fail(s);
  }
  std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                           CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
  // A kernel's correlation id is that of the API call that launched it. Ours go through the
  // runtime API; libraries may launch through the driver API (cuLaunchKernel/cuLaunchKernelEx),
  // and without its records such a kernel (a cuBLASLt GEMM among them) would find no launching
  // thread, and so no NVTX phase, stage or micro-batch (activity_timeline.cpp).
  if (options.api_calls) kinds.insert(kinds.end(), {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER});
  if (options.nvtx_ranges) kinds.push_back(CUPTI_ACTIVITY_KIND_MARKER);
  for (CUpti_ActivityKind kind : kinds) {
    if (auto s = cupti_check(cuptiActivityEnable(kind), "cuptiActivityEnable(kind " + std::to_string(kind) + ")"); !s) {
      for (int enabled : tracer->enabled_kinds_) cuptiActivityDisable(static_cast<CUpti_ActivityKind>(enabled));
      return fail(s);
    }
    tracer->enabled_kinds_.push_back(kind);
  }
  if (options.nvtx_ranges) point_nvtx_at_cupti();
  const char* injection = std::getenv("NVTX_INJECTION64_PATH");
  tracer->nvtx_injected_ = options.nvtx_ranges && injection != nullptr && std::string(injection).find("cupti") != std::string::npos;
  return tracer;
}

ActivityTracer::~ActivityTracer() {
  for (int kind : enabled_kinds_) cuptiActivityDisable(static_cast<CUpti_ActivityKind>(kind));
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard lock(g_mutex);
    if (g_active == shared_) g_active.reset();
  }
  std::lock_guard lock(shared_->mutex);
  for (std::uint8_t* buffer : shared_->free_buffers) std::free(buffer);
  shared_->free_buffers.clear();
}

Result<bool> ActivityTracer::flush() {
  return cupti_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
}

std::vector<ActivityRecord> ActivityTracer::take_records() {
  std::lock_guard lock(shared_->mutex);
  std::vector<ActivityRecord> out;
  out.swap(shared_->records);
  return out;
}

std::uint64_t ActivityTracer::dropped_records() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->dropped;
}

Result<ClockAlignment> ActivityTracer::align_with(const std::function<std::int64_t()>& cpu_now_ns, int samples) const {
  std::vector<ClockSample> readings;
  for (int i = 0; i < std::max(samples, 1); ++i) {
    ClockSample sample;
    std::uint64_t cupti_ns = 0;
    sample.cpu_before_ns = cpu_now_ns();
    if (auto s = cupti_check(cuptiGetTimestamp(&cupti_ns), "cuptiGetTimestamp"); !s) return s.errors();
    sample.cpu_after_ns = cpu_now_ns();
    sample.other_ns = static_cast<std::int64_t>(cupti_ns);
    readings.push_back(sample);
  }
  return align_clocks(readings);
}

}  // namespace plansight::runtime::cuda
