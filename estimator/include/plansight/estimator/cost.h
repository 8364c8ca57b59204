// Training time and cost from a given throughput (achieved TFLOP/s per GPU, or MFU).
#pragma once

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// Iteration time from the plan's achieved_tflops (hardware FLOPs) or mfu (model FLOPs), then
// tokens/s, days for the token budget, GPU-hours and cost. available=false if neither is set.
TimeEstimate time_from_throughput(const Plan& plan, const FlopsEstimate& flops);

// Fills the derived figures of `time` from its iteration_s.
void complete_time_estimate(const Plan& plan, const FlopsEstimate& flops, TimeEstimate& time);

// Narayanan et al. 2021, eq. (4): days ~= 8 T P / (n X) / 86400 (2 forward + 4 backward +
// 2 recomputation FLOPs per parameter per token).
double rule_of_thumb_training_days(double tokens, double parameters, double gpus, double flops_per_gpu);

}  // namespace plansight::estimator
