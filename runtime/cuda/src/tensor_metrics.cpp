// Tensor-core metric names per chip family (tensor_metrics.h). Checked with CUDA 13.0's CUPTI
// (cuptiProfilerHostGetMetricProperties) for GV100, TU102, GA100, GA102, AD102 and GH100; the
// GH100 names do not exist before Hopper, and Blackwell (GB100) knows neither set. The
// config-image test (tests/device/metric_config_test.cpp) builds them for GA100 and GH100.
#include "plansight/runtime/cuda/tensor_metrics.h"

namespace plansight::runtime::cuda {

std::vector<std::string> TensorCoreMetrics::all() const {
  std::vector<std::string> names;
  if (!active_pct.empty()) names.push_back(active_pct);
  names.insert(names.end(), instructions.begin(), instructions.end());
  return names;
}

TensorCoreMetrics tensor_core_metrics(std::string_view chip) {
  TensorCoreMetrics m;
  m.chip = std::string(chip);
  const std::string_view family = chip.substr(0, 2);
  if (family == "GH") {
    m.active_pct = "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active";
    m.instructions = {"sm__inst_executed_pipe_tensor_op_hmma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum"};
  } else if (family == "GV" || family == "TU" || family == "GA" || family == "AD") {
    m.active_pct = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
    m.instructions = {"sm__inst_executed_pipe_tensor_op_hmma.sum"};
  }
  return m;
}

}  // namespace plansight::runtime::cuda
