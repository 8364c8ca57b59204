// measure_tensor_cores (tensor_core_counters.h) on CUPTI's range profiler (cupti_range_profiler.h,
// CUDA 12.6+): profiler initialise, chip name, enable on the current context, counter-data image
// for one range, user range + user replay until every pass is submitted, decode, evaluate with the
// profiler host API. The context comes from the driver through cudaGetDriverEntryPointByVersion, so
// this library never links libcuda directly and loads on machines without a driver.
#include "plansight/runtime/cuda/tensor_core_counters.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <optional>
#include <string>

#include "cuda_status.h"
#include "driver_context.h"
#include "cupti_status.h"
#include "plansight/runtime/cuda/metric_config.h"
#include "plansight/runtime/cuda/tensor_metrics.h"

namespace plansight::runtime::cuda {
namespace {

template <class P>
P cupti_params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

// Permission or support problems become a fallback, everything else an error.
bool is_fallback(CUptiResult r) {
  return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_NOT_SUPPORTED ||
         r == CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED ||
         r == CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED || r == CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED ||
         r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES ||  // a vGPU without profiling rights
         r == CUPTI_ERROR_HARDWARE_BUSY ||  // another client (DCGM's profiling, a profiler) holds the counters
         r == CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED;
}

// The profiler's state of one measurement; disables and deinitialises on scope exit.
struct Session {
  CUpti_RangeProfiler_Object* object = nullptr;
  bool initialized = false;
  ~Session() {
    if (object != nullptr) {
      auto p = cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object;
      cuptiRangeProfilerDisable(&p);
    }
    if (initialized) {
      auto p = cupti_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      cuptiProfilerDeInitialize(&p);
    }
  }
};

}  // namespace

Result<TensorCoreMeasurement> measure_tensor_cores(int device, const std::function<Result<bool>()>& workload) {
  TensorCoreMeasurement m;
  auto fallback = [&](CUptiResult r, const std::string& call) -> Result<TensorCoreMeasurement> {
    m.fallback_reason = cupti_failure(r, call).message + "; tensor-core use comes from kernel names";
    return m;
  };
  if (auto s = cuda_check(cudaSetDevice(device), "cudaSetDevice"); !s) return s.errors();
  if (auto s = cuda_check(cudaFree(nullptr), "cudaFree(nullptr) (context creation)"); !s) return s.errors();
  auto ctx = current_context();
  if (!ctx) return ctx.errors();

  Session session;
  auto init = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
    if (is_fallback(r)) return fallback(r, "cuptiProfilerInitialize");
    return cupti_failure(r, "cuptiProfilerInitialize");
  }
  session.initialized = true;
  auto chip = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (auto s = cupti_check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName"); !s) return s.errors();
  m.chip = chip.pChipName;
  const TensorCoreMetrics known = tensor_core_metrics(m.chip);
  m.metrics = known.all();
  if (m.metrics.empty()) {
    m.fallback_reason = "no tensor-core metric is known for chip " + m.chip + "; tensor-core use comes from kernel names";
    return m;
  }
  auto config = build_metric_config(m.chip, m.metrics);
  if (!config) return config.errors();

  auto enable = cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = *ctx;
  if (CUptiResult r = cuptiRangeProfilerEnable(&enable); r != CUPTI_SUCCESS) {
    if (is_fallback(r)) return fallback(r, "cuptiRangeProfilerEnable");
    return cupti_failure(r, "cuptiRangeProfilerEnable");
  }
  session.object = enable.pRangeProfilerObject;
  // Every range-profiler call from here on: a container or driver that refuses profiling may
  // say so at any of them, not only at Initialize, Enable or Start, and that is the kernel-name
  // fallback, as there, not an error.
  const auto failed = [&](CUptiResult r, const char* call) -> std::optional<Result<TensorCoreMeasurement>> {
    if (r == CUPTI_SUCCESS) return std::nullopt;
    if (is_fallback(r)) return fallback(r, call);
    return Result<TensorCoreMeasurement>(cupti_failure(r, call));
  };

  std::vector<const char*> names;
  for (const auto& name : m.metrics) names.push_back(name.c_str());
  auto size = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = session.object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  if (auto out = failed(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize")) {
    return std::move(*out);
  }
  std::vector<std::uint8_t> counter_data(size.counterDataSize);
  auto image = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  image.pRangeProfilerObject = session.object;
  image.counterDataSize = counter_data.size();
  image.pCounterData = counter_data.data();
  if (auto out =
          failed(cuptiRangeProfilerCounterDataImageInitialize(&image), "cuptiRangeProfilerCounterDataImageInitialize")) {
    return std::move(*out);
  }

  auto set = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = session.object;
  set.configSize = config->config_image.size();
  set.pConfig = config->config_image.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = 1;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  if (auto out = failed(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig")) {
    return std::move(*out);
  }
  // One replay pass per iteration, until Stop reports every pass submitted (CUPTI keeps the pass
  // state between Start and Stop); bounded by the host configuration's pass count in case it never does.
  const std::size_t max_passes = config->passes + 2;
  for (bool done = false; !done;) {
    if (m.passes >= max_passes) {
      return make_error("cupti", "the range profiler wanted more than " + std::to_string(max_passes) + " passes");
    }
    auto start = cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = session.object;
    if (CUptiResult r = cuptiRangeProfilerStart(&start); r != CUPTI_SUCCESS) {
      if (is_fallback(r)) return fallback(r, "cuptiRangeProfilerStart");
      return cupti_failure(r, "cuptiRangeProfilerStart");
    }
    auto push = cupti_params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = session.object;
    push.pRangeName = "workload";
    if (auto out = failed(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange")) {
      return std::move(*out);
    }
    if (auto w = workload(); !w) return w.errors();
    auto pop = cupti_params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = session.object;
    if (auto out = failed(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange")) {
      return std::move(*out);
    }
    auto stop = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = session.object;
    if (auto out = failed(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop")) {
      return std::move(*out);
    }
    ++m.passes;
    done = stop.isAllPassSubmitted != 0;
  }
  auto decode = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = session.object;
  if (auto out = failed(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData")) {
    return std::move(*out);
  }
  // A dropped range reads as zeros: an error, not a measurement of no tensor-core use.
  if (decode.numOfRangeDropped != 0) {
    return make_error("cupti", "cuptiRangeProfilerDecodeData dropped " + std::to_string(decode.numOfRangeDropped) +
                                   " range(s) of the workload; no counter values to read");
  }

  auto host_init = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host_init.pChipName = m.chip.c_str();
  if (auto s = cupti_check(cuptiProfilerHostInitialize(&host_init), "cuptiProfilerHostInitialize"); !s) return s.errors();
  m.values.assign(names.size(), 0.0);
  auto evaluate = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  evaluate.pHostObject = host_init.pHostObject;
  evaluate.pCounterDataImage = counter_data.data();
  evaluate.counterDataImageSize = counter_data.size();
  evaluate.rangeIndex = 0;
  evaluate.ppMetricNames = names.data();
  evaluate.numMetrics = names.size();
  evaluate.pMetricValues = m.values.data();
  const auto evaluated = cupti_check(cuptiProfilerHostEvaluateToGpuValues(&evaluate), "cuptiProfilerHostEvaluateToGpuValues");
  auto host_done = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  host_done.pHostObject = host_init.pHostObject;
  cuptiProfilerHostDeinitialize(&host_done);
  if (!evaluated) return evaluated.errors();
  m.from_counters = true;
  return m;
}

}  // namespace plansight::runtime::cuda
