// One measurement with CUPTI's range profiler (cupti_range_profiler.h, CUDA 12.6+) on the calling
// thread's context, the steps every tensor-core measurement shares: profiler initialise, chip
// name, the tensor-core metrics of that chip (tensor_metrics.h) and their config image
// (metric_config.h), enable on the context, a counter-data image for `max_ranges` ranges,
// set-config, start/stop, decode, then range names and metric values through the profiler host
// API (cupti_profiler_host.h). measure_tensor_cores runs it with a user range and user replay,
// the per-kernel measurement with auto ranges and kernel replay.
//
// Every step answers true (done), false (counters refused for lack of permission or support:
// refusal() says why, and the caller falls back to kernel-name rules) or an error naming the
// CUPTI call. The destructor undoes whatever was done, in reverse order, without throwing.
#pragma once

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

// Permission or support problems: a fallback to kernel-name rules, not an error.
bool is_counter_refusal(CUptiResult result);

class RangeProfilerSession {
 public:
  RangeProfilerSession() = default;
  ~RangeProfilerSession();
  RangeProfilerSession(const RangeProfilerSession&) = delete;
  RangeProfilerSession& operator=(const RangeProfilerSession&) = delete;

  // Makes `device` current, initialises the profiler, reads the chip, builds the config image for
  // the chip's tensor-core metrics followed by `extra_metrics` (kKernelDurationMetric for the
  // per-kernel measurement), enables the range profiler on the context and sizes the counter-data
  // image for `max_ranges`. false: refused, or no tensor-core metric is known for the chip
  // (refusal() says which).
  Result<bool> open(int device, std::size_t max_ranges, const std::vector<std::string>& extra_metrics = {});
  // cuptiRangeProfilerSetConfig with one nesting level (auto ranges allow no other).
  Result<bool> configure(CUpti_ProfilerRange range, CUpti_ProfilerReplayMode replay, std::size_t max_ranges_per_pass);
  Result<bool> start();
  Result<bool> stop(bool& all_passes_submitted);
  Result<bool> push_range(const char* name);
  Result<bool> pop_range();
  // Decodes the hardware's data into the counter-data image; `dropped`: ranges that did not fit.
  Result<bool> decode(std::size_t& dropped);
  // Ranges stored in the counter-data image (cuptiRangeProfilerGetCounterDataInfo).
  Result<std::size_t> range_count() const;
  // A range's name (cuptiProfilerHostGetRangeName, nested names joined by "/"): the pushed name
  // for user ranges; for auto ranges, the header says, the kernel's number in execution order.
  Result<std::string> range_name(std::size_t index);
  // The values of every metric for range `index`: metrics() then the extra metrics, in order.
  Result<std::vector<double>> evaluate(std::size_t index);

  const std::string& refusal() const { return refusal_; }
  const std::string& chip() const { return chip_; }
  // The tensor-core metrics (tensor_core_metrics(chip).all()), without the extra metrics.
  const std::vector<std::string>& metrics() const { return metrics_; }
  std::size_t config_passes() const { return config_passes_; }
  CUcontext context() const { return context_; }

 private:
  // true on success; false after recording a refusal; an error otherwise.
  Result<bool> call(CUptiResult result, const char* what);
  Result<bool> host();  // the profiler host object, made on first use

  CUcontext context_ = nullptr;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  bool initialized_ = false;
  bool started_ = false;
  std::string refusal_;
  std::string chip_;
  std::vector<std::string> metrics_;
  std::vector<std::string> all_metrics_;   // metrics_ then the extra metrics
  std::vector<const char*> metric_names_;  // into all_metrics_, for the CUPTI calls
  std::vector<std::uint8_t> config_image_;
  std::size_t config_passes_ = 0;
  std::vector<std::uint8_t> counter_data_;
};

}  // namespace plansight::runtime::cuda
