// RangeProfilerSession (range_profiler_session.h): the CUPTI range-profiler calls, each checked;
// a refusal (permission, support, another profiler holding the counters) is recorded with the
// call's name and CUPTI's text, so the caller can say why counters were not used.
#include "range_profiler_session.h"

#include <cuda_runtime.h>
#include <cupti_target.h>

#include <mutex>

#include "cuda_status.h"
#include "cupti_status.h"
#include "driver_context.h"
#include "plansight/runtime/cuda/metric_config.h"
#include "plansight/runtime/cuda/tensor_metrics.h"

namespace plansight::runtime::cuda {
namespace {

// cuptiProfilerInitialize/DeInitialize set up and tear down the profiler interface of the whole
// process, not of one session. Without a count, a session destroyed while another one is open
// (measure_tensor_cores on one thread, a KernelCounterSession on another, or a test that nests
// them) would DeInitialize the profiler under the other session's Enable/Start/Stop, and its later
// calls would run on a torn-down profiler. The count makes the first Initialize and the last
// DeInitialize the only ones that reach CUPTI.
std::mutex g_profiler_mutex;
int g_profiler_users = 0;

CUptiResult initialize_profiler() {
  std::lock_guard lock(g_profiler_mutex);
  if (g_profiler_users == 0) {
    auto p = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (CUptiResult r = cuptiProfilerInitialize(&p); r != CUPTI_SUCCESS) return r;
  }
  ++g_profiler_users;
  return CUPTI_SUCCESS;
}

void deinitialize_profiler() {
  std::lock_guard lock(g_profiler_mutex);
  if (g_profiler_users == 0 || --g_profiler_users > 0) return;
  auto p = cupti_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
  cuptiProfilerDeInitialize(&p);
}

}  // namespace

bool is_counter_refusal(CUptiResult r) {
  return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_NOT_SUPPORTED ||
         r == CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED ||
         r == CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED || r == CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED ||
         r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES ||  // a vGPU without profiling rights
         r == CUPTI_ERROR_HARDWARE_BUSY ||  // another client (DCGM's profiling, a profiler) holds the counters
         r == CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED;
}

RangeProfilerSession::~RangeProfilerSession() {
  // Return codes are not checked here: nothing can be done about them, and a destructor must
  // not throw; every call that matters was checked when it was made.
  if (host_ != nullptr) {
    auto p = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = host_;
    cuptiProfilerHostDeinitialize(&p);
  }
  if (object_ != nullptr) {
    if (started_) {
      auto p = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object_;
      cuptiRangeProfilerStop(&p);
    }
    auto p = cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&p);
  }
  // Last: the host object, the profiler object and the counter data are done with by now.
  if (initialized_) deinitialize_profiler();
}

// Every range-profiler call: a container or driver that refuses profiling may say so at any of
// them, not only at Initialize, Enable or Start, and that is the kernel-name fallback there too.
Result<bool> RangeProfilerSession::call(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  if (is_counter_refusal(r)) {
    refusal_ = cupti_failure(r, what).message;
    return false;
  }
  return cupti_failure(r, what);
}

Result<bool> RangeProfilerSession::open(int device, std::size_t max_ranges, const std::vector<std::string>& extra_metrics) {
  if (auto s = cuda_check(cudaSetDevice(device), "cudaSetDevice"); !s) return s.errors();
  if (auto s = cuda_check(cudaFree(nullptr), "cudaFree(nullptr) (context creation)"); !s) return s.errors();
  auto ctx = current_context();
  if (!ctx) return ctx.errors();
  context_ = *ctx;

  if (auto r = call(initialize_profiler(), "cuptiProfilerInitialize"); !r || !*r) return r;
  initialized_ = true;
  auto chip = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (auto r = call(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName"); !r || !*r) return r;
  chip_ = chip.pChipName != nullptr ? chip.pChipName : "";
  metrics_ = tensor_core_metrics(chip_).all();
  if (metrics_.empty()) {
    refusal_ = "no tensor-core metric is known for chip " + chip_;
    return false;
  }
  all_metrics_ = metrics_;
  all_metrics_.insert(all_metrics_.end(), extra_metrics.begin(), extra_metrics.end());
  // After all_metrics_ is complete: the pointers stay valid while it is not changed.
  for (const auto& name : all_metrics_) metric_names_.push_back(name.c_str());
  auto config = build_metric_config(chip_, all_metrics_);
  if (!config) return config.errors();
  config_image_ = std::move(config->config_image);
  config_passes_ = config->passes;

  auto enable = cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context_;
  if (auto r = call(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable"); !r || !*r) return r;
  object_ = enable.pRangeProfilerObject;
  if (object_ == nullptr) return make_error("cupti", "cuptiRangeProfilerEnable succeeded but returned no profiler object");

  // The image holds `max_ranges` ranges; the range tree needs at least as many nodes (header:
  // "must be >= maxNumOfRanges"), and one level of nesting adds none.
  auto size = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object_;
  size.pMetricNames = metric_names_.data();
  size.numMetrics = metric_names_.size();
  size.maxNumOfRanges = max_ranges;
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
  if (auto r = call(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize"); !r || !*r) {
    return r;
  }
  if (size.counterDataSize == 0) return make_error("cupti", "cuptiRangeProfilerGetCounterDataSize returned size 0");
  counter_data_.assign(size.counterDataSize, 0);
  auto image = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  image.pRangeProfilerObject = object_;
  image.counterDataSize = counter_data_.size();
  image.pCounterData = counter_data_.data();
  return call(cuptiRangeProfilerCounterDataImageInitialize(&image), "cuptiRangeProfilerCounterDataImageInitialize");
}

Result<bool> RangeProfilerSession::configure(CUpti_ProfilerRange range, CUpti_ProfilerReplayMode replay,
                                             std::size_t max_ranges_per_pass) {
  auto set = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = object_;
  set.configSize = config_image_.size();
  set.pConfig = config_image_.data();
  set.counterDataImageSize = counter_data_.size();
  set.pCounterDataImage = counter_data_.data();
  set.range = range;
  set.replayMode = replay;
  set.maxRangesPerPass = max_ranges_per_pass;
  set.numNestingLevels = 1;  // header: "For Auto range mode, this should be set to 1"
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  return call(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
}

Result<bool> RangeProfilerSession::start() {
  auto p = cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = object_;
  auto r = call(cuptiRangeProfilerStart(&p), "cuptiRangeProfilerStart");
  if (r && *r) started_ = true;
  return r;
}

Result<bool> RangeProfilerSession::stop(bool& all_passes_submitted) {
  auto p = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = object_;
  started_ = false;  // a failed Stop is not retried by the destructor
  auto r = call(cuptiRangeProfilerStop(&p), "cuptiRangeProfilerStop");
  all_passes_submitted = p.isAllPassSubmitted != 0;
  return r;
}

Result<bool> RangeProfilerSession::push_range(const char* name) {
  auto p = cupti_params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = object_;
  p.pRangeName = name;
  return call(cuptiRangeProfilerPushRange(&p), "cuptiRangeProfilerPushRange");
}

Result<bool> RangeProfilerSession::pop_range() {
  auto p = cupti_params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = object_;
  return call(cuptiRangeProfilerPopRange(&p), "cuptiRangeProfilerPopRange");
}

Result<bool> RangeProfilerSession::decode(std::size_t& dropped) {
  auto p = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = object_;
  auto r = call(cuptiRangeProfilerDecodeData(&p), "cuptiRangeProfilerDecodeData");
  dropped = p.numOfRangeDropped;
  return r;
}

Result<std::size_t> RangeProfilerSession::range_count() const {
  auto p = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  p.pCounterDataImage = counter_data_.data();
  p.counterDataImageSize = counter_data_.size();
  if (auto s = cupti_check(cuptiRangeProfilerGetCounterDataInfo(&p), "cuptiRangeProfilerGetCounterDataInfo"); !s) {
    return s.errors();
  }
  return p.numTotalRanges;
}

Result<bool> RangeProfilerSession::host() {
  if (host_ != nullptr) return true;
  auto p = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip_.c_str();
  if (auto s = cupti_check(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize"); !s) return s.errors();
  if (p.pHostObject == nullptr) return make_error("cupti", "cuptiProfilerHostInitialize returned no host object");
  host_ = p.pHostObject;
  return true;
}

Result<std::string> RangeProfilerSession::range_name(std::size_t index) {
  if (auto h = host(); !h) return h.errors();
  auto p = cupti_params<CUpti_Profiler_Host_GetRangeName_Params>(CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE);
  p.pCounterDataImage = counter_data_.data();
  p.counterDataImageSize = counter_data_.size();
  p.rangeIndex = index;
  p.delimiter = "/";  // the header's default, between nesting levels
  if (auto s = cupti_check(cuptiProfilerHostGetRangeName(&p), "cuptiProfilerHostGetRangeName"); !s) return s.errors();
  // The header makes freeing the name the caller's job but does not say with which allocator;
  // a wrong free would crash, so the few bytes per range are left to the process.
  return std::string(p.pRangeName != nullptr ? p.pRangeName : "");
}

Result<std::vector<double>> RangeProfilerSession::evaluate(std::size_t index) {
  if (auto h = host(); !h) return h.errors();
  std::vector<double> values(metric_names_.size(), 0.0);
  auto p = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pCounterDataImage = counter_data_.data();
  p.counterDataImageSize = counter_data_.size();
  p.rangeIndex = index;
  p.ppMetricNames = metric_names_.data();
  p.numMetrics = metric_names_.size();
  p.pMetricValues = values.data();
  if (auto s = cupti_check(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues"); !s) {
    return s.errors();
  }
  return values;
}

}  // namespace plansight::runtime::cuda
