// Offloading rules shared by the memory and time models (formulas and sources in offload.h).
#include "plansight/estimator/offload.h"

#include <algorithm>

#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

// The full-precision copy the CPU updates: the master weights, or, without a separate master
// (fp32 training, or master_precision none), the weights in their own precision.
double host_copy_bytes(const TrainingSpec& t, const StateBytesPerParameter& b, double& states) {
  const bool full_precision = t.precision == Precision::fp32 || t.precision == Precision::tf32;
  const double master = full_precision ? 0.0 : bytes_per_element(t.master_precision);
  states = b.optimizer - master;
  return master > 0 ? master : b.weights;
}

// CPU Adam reads fp32 gradients (DeepSpeed upcasts into its pinned fp32 gradient partition).
constexpr double kHostGradientBytes = 4;

}  // namespace

double host_state_bytes_per_parameter(const TrainingSpec& t) {
  const StateBytesPerParameter b = state_bytes_per_parameter(t);
  double states = 0;
  const double copy = host_copy_bytes(t, b, states);
  return copy + states + kHostGradientBytes;
}

double cpu_optimizer_bytes_per_parameter(const TrainingSpec& t) {
  const StateBytesPerParameter b = state_bytes_per_parameter(t);
  double states = 0;
  const double copy = host_copy_bytes(t, b, states);
  return 2 * (copy + states) + kHostGradientBytes + b.weights;
}

double gpus_per_node_used(const ClusterSpec& c) {
  return static_cast<double>(std::max<std::int64_t>(std::min(c.gpus_per_node, c.gpus), 1));
}

double cpu_optimizer_seconds(const Plan& plan, double parameters) {
  const double per_gpu_bytes_per_s = plan.cluster.host_memory_bandwidth_bytes_per_s / gpus_per_node_used(plan.cluster);
  if (per_gpu_bytes_per_s <= 0) return 0;  // validate() rejects offloading without it
  return parameters * cpu_optimizer_bytes_per_parameter(plan.training) / per_gpu_bytes_per_s;
}

double host_link_seconds(const ClusterSpec& c, double bytes) {
  return c.host_link_bandwidth_bytes_per_s > 0 ? bytes / c.host_link_bandwidth_bytes_per_s : 0.0;
}

}  // namespace plansight::estimator
