// Plans the estimate benchmarks share (bench_estimate.cpp, schedule_regimes.cpp), so that their
// figures are of the same plans.
#pragma once

#include <cstdint>

#include "plansight/estimator/plan.h"
#include "plansight/estimator/presets.h"

namespace plansight::bench {

// Narayanan et al.'s 1 T model on 3072 GPUs with 64 pipeline stages.
inline estimator::Plan trillion_on_3072() {
  estimator::Plan plan = estimator::default_plan();
  plan.model = *estimator::find_model("narayanan-1008b");
  plan.cluster.gpus = 3072;
  plan.layout.pp = 64;
  return plan;
}

// The largest plan an edit should answer interactively (issue target: <= 2 ms): 64 pipeline
// stages, 1024 micro-batches, predicted (no throughput given); the 1 T model with 256 layers so
// that 64 x 4 chunks divide.
inline estimator::Plan largest_interactive(estimator::PipelineSchedule schedule, std::int64_t vpp) {
  estimator::Plan plan = trillion_on_3072();
  plan.model.layers = 256;
  plan.layout.tp = 8;
  plan.layout.vpp = vpp;
  plan.layout.schedule = schedule;
  plan.training.micro_batch = 1;
  plan.training.global_batch = 1024 * 6;  // dp = 3072 / (8 x 64) = 6: 1024 micro-batches
  return plan;
}

}  // namespace plansight::bench
