// Time and cost from an assumed throughput. Achieved TFLOP/s counts hardware FLOPs (with
// recomputation), as Narayanan et al. 2021 report it (Sec. 5.1); MFU counts model FLOPs
// (Chowdhery et al. 2022, PaLM, App. B).
#include "plansight/estimator/cost.h"

namespace plansight::estimator {

void complete_time_estimate(const Plan& plan, const FlopsEstimate& flops, TimeEstimate& time) {
  const double gpus = static_cast<double>(plan.cluster.gpus);
  const double peak = plan.cluster.gpu.peak_flops(plan.training.precision);
  const double tokens_per_iteration =
      static_cast<double>(plan.training.global_batch) * static_cast<double>(plan.training.seq_len);
  if (time.iteration_s <= 0 || gpus <= 0) return;
  time.available = true;
  time.tokens_per_s = tokens_per_iteration / time.iteration_s;
  time.achieved_tflops_per_gpu = flops.hardware_per_iteration / (time.iteration_s * gpus) / 1e12;
  time.mfu = peak > 0 ? flops.model_per_iteration / (time.iteration_s * gpus * peak) : 0;
  time.hfu = peak > 0 ? flops.hardware_per_iteration / (time.iteration_s * gpus * peak) : 0;
  if (plan.training.tokens > 0) {
    const double seconds = plan.training.tokens / time.tokens_per_s;
    time.training_days = seconds / 86400.0;
    time.gpu_hours = seconds / 3600.0 * gpus;
    time.cost = time.gpu_hours * plan.cluster.price_per_gpu_hour;
    time.currency = plan.cluster.currency;
  }
}

TimeEstimate time_from_throughput(const Plan& plan, const FlopsEstimate& flops) {
  TimeEstimate time;
  const double gpus = static_cast<double>(plan.cluster.gpus);
  if (plan.training.achieved_tflops > 0) {
    time.iteration_s = flops.hardware_per_iteration / (gpus * plan.training.achieved_tflops * 1e12);
  } else if (plan.training.mfu > 0) {
    const double peak = plan.cluster.gpu.peak_flops(plan.training.precision);
    if (peak > 0) time.iteration_s = flops.model_per_iteration / (gpus * peak * plan.training.mfu);
  }
  complete_time_estimate(plan, flops, time);
  return time;
}

double rule_of_thumb_training_days(double tokens, double parameters, double gpus, double flops_per_gpu) {
  return 8.0 * tokens * parameters / (gpus * flops_per_gpu) / 86400.0;
}

}  // namespace plansight::estimator
