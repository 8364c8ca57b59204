// CUPTI Activity API tracing of everything the GPU does during a probe step: kernels (concurrent
// kernel records, so kernels of different streams may overlap), memcpy, memset, synchronisation,
// runtime API calls (to tie kernels to their launching thread) and NVTX ranges (CUPTI's NVTX
// support: NVTX_INJECTION64_PATH must name libcupti.so at the process's first NVTX call; start()
// sets it to the loaded libcupti when unset, so start the tracer before any range is pushed).
// Records are decoded off the hot path: CUPTI hands full buffers to its own worker thread, which
// converts them into ActivityRecords; rank threads only fill CUPTI's buffers. ActivityTimeline
// (activity_timeline.h) turns the records into a measured Timeline, aligned with the CPU tracer
// by align_with(). CUPTI's activity callbacks are process-wide, so one tracer runs at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/kernels/cuda/status.h"
#include "plansight/runtime/cuda/activity_timeline.h"
#include "plansight/runtime/cuda/clock_alignment.h"

namespace plansight::runtime::cuda {

struct ActivityTracerOptions {
  std::size_t buffer_bytes = std::size_t{8} << 20;  // per CUPTI buffer; a step of a small GPT fills < 1
  bool api_calls = true;                            // runtime and driver API records (phase inheritance, sync threads)
  bool nvtx_ranges = true;                          // NVTX ranges through CUPTI (MARKER records)
};

class ActivityTracer {
 public:
  // Registers the buffer callbacks and enables the record kinds. Errors name the CUPTI call
  // (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES and friends reach the caller as they are), or say that
  // another tracer is running.
  static Result<std::unique_ptr<ActivityTracer>> start(const ActivityTracerOptions& options = {});
  ~ActivityTracer();  // disables the kinds and flushes; later buffers are dropped
  ActivityTracer(const ActivityTracer&) = delete;
  ActivityTracer& operator=(const ActivityTracer&) = delete;

  // Hands every buffer CUPTI holds to the worker and waits for it (cuptiActivityFlushAll, forced).
  // Call after the traced work has been synchronised.
  Result<bool> flush();
  // The records decoded so far, in buffer order; the tracer keeps none of them.
  std::vector<ActivityRecord> take_records();
  // Records CUPTI dropped because no buffer was free (0 in a healthy run).
  std::uint64_t dropped_records() const;
  // Whether NVTX ranges can arrive (NVTX_INJECTION64_PATH set when the tracer started).
  bool nvtx_injected() const { return nvtx_injected_; }

  // Offset from CUPTI's clock (cuptiGetTimestamp, the clock of the records) to `cpu_now_ns` (the
  // CPU tracer's now_ns), from `samples` back-to-back readings (clock_alignment.h).
  Result<ClockAlignment> align_with(const std::function<std::int64_t()>& cpu_now_ns, int samples = 32) const;

  // The id CUPTI writes into records of the calling thread (the system thread id; the tracer
  // selects CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), for ActivityTimeline::assign_thread.
  static std::uint32_t current_thread_id();
  // The id CUPTI writes into records of work on `stream` (cuptiGetStreamIdEx in the calling
  // thread's context), for ActivityTimeline::assign_stream.
  static Result<std::uint32_t> stream_id(cudaStream_t stream);

  struct Shared;  // state the CUPTI callbacks reach

 private:
  ActivityTracer() = default;
  std::shared_ptr<Shared> shared_;
  std::vector<int> enabled_kinds_;
  bool nvtx_injected_ = false;
};

}  // namespace plansight::runtime::cuda
