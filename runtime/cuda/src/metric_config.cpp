// build_metric_config and friends (metric_config.h) on CUPTI's profiler host API. Each metric is
// validated with cuptiProfilerHostGetMetricProperties before it is added: ConfigAddMetrics
// reports an unknown name only as CUPTI_ERROR_INVALID_PARAMETER (CUDA 13.0), which would not say
// which name was wrong.
#include "plansight/runtime/cuda/metric_config.h"

#include <cupti_profiler_host.h>

#include <algorithm>
#include <memory>

#include "cupti_status.h"

namespace plansight::runtime::cuda {
namespace {

// The host object of one chip; deinitialised on scope exit.
class HostObject {
 public:
  static Result<std::unique_ptr<HostObject>> create(std::string_view chip) {
    auto chips = profiler_chips();
    if (!chips) return chips.errors();
    if (std::find(chips->begin(), chips->end(), chip) == chips->end()) {
      std::string known;
      for (const auto& c : *chips) known += (known.empty() ? "" : ", ") + c;
      std::string message(1, '"');
      message.append(chip).append("\" is not a chip this CUPTI knows; valid: ").append(known);
      return make_error("profiler.chip", message);
    }
    std::unique_ptr<HostObject> host(new HostObject(std::string(chip)));
    auto params = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = host->chip_.c_str();
    if (auto s = cupti_check(cuptiProfilerHostInitialize(&params), "cuptiProfilerHostInitialize(" + host->chip_ + ")");
        !s) {
      return s.errors();
    }
    host->object_ = params.pHostObject;
    return host;
  }
  ~HostObject() {
    if (object_ == nullptr) return;
    auto params = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    params.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&params);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUpti_Profiler_Host_Object* get() const { return object_; }
  const std::string& chip() const { return chip_; }

 private:
  explicit HostObject(std::string chip) : chip_(std::move(chip)) {}
  std::string chip_;
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

Result<std::vector<std::string>> describe(const HostObject& host, const std::vector<std::string>& metrics) {
  std::vector<std::string> descriptions;
  std::vector<Diagnostic> unknown;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    auto params = cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    params.pHostObject = host.get();
    params.pMetricName = metrics[i].c_str();
    const CUptiResult result = cuptiProfilerHostGetMetricProperties(&params);
    if (result == CUPTI_ERROR_INVALID_METRIC_NAME) {
      std::string message(1, '"');
      message.append(metrics[i]).append("\" is not a metric of chip ").append(host.chip());
      message.append(" (cuptiProfilerHostGetMetricProperties: CUPTI_ERROR_INVALID_METRIC_NAME)");
      unknown.push_back(make_error("profiler.metrics[" + std::to_string(i) + "]", message));
      continue;
    }
    if (auto s = cupti_check(result, "cuptiProfilerHostGetMetricProperties(" + metrics[i] + ")"); !s) return s.errors();
    descriptions.emplace_back(params.pDescription != nullptr ? params.pDescription : "");
  }
  if (!unknown.empty()) return unknown;
  return descriptions;
}

}  // namespace

Result<std::vector<std::string>> profiler_chips() {
  auto params = cupti_params<CUpti_Profiler_Host_GetSupportedChips_Params>(CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  if (auto s = cupti_check(cuptiProfilerHostGetSupportedChips(&params), "cuptiProfilerHostGetSupportedChips"); !s) {
    return s.errors();
  }
  std::vector<std::string> chips;
  for (std::size_t i = 0; i < params.numChips; ++i) chips.emplace_back(params.ppChipNames[i]);
  return chips;
}

Result<std::vector<std::string>> describe_metrics(std::string_view chip, const std::vector<std::string>& metrics) {
  auto host = HostObject::create(chip);
  if (!host) return host.errors();
  return describe(**host, metrics);
}

Result<MetricConfig> build_metric_config(std::string_view chip, const std::vector<std::string>& metrics) {
  if (metrics.empty()) return make_error("profiler.metrics", "no metrics; valid: at least one metric name");
  auto host = HostObject::create(chip);
  if (!host) return host.errors();
  if (auto known = describe(**host, metrics); !known) return known.errors();

  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  auto add = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = (*host)->get();
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (auto s = cupti_check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics"); !s) {
    return s.errors();
  }
  auto size = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = (*host)->get();
  if (auto s = cupti_check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize"); !s) {
    return s.errors();
  }
  MetricConfig config;
  config.chip = std::string(chip);
  config.metrics = metrics;
  config.config_image.resize(size.configImageSize);
  auto image = cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = (*host)->get();
  image.configImageSize = config.config_image.size();
  image.pConfigImage = config.config_image.data();
  if (auto s = cupti_check(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage"); !s) {
    return s.errors();
  }
  auto passes = cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = config.config_image.size();
  passes.pConfigImage = config.config_image.data();
  if (auto s = cupti_check(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses"); !s) {
    return s.errors();
  }
  config.passes = passes.numOfPasses;
  return config;
}

}  // namespace plansight::runtime::cuda
