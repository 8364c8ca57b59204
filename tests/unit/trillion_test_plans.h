// Narayanan et al.'s 1 T model on 3072 GPUs in the form the estimate benchmarks time
// (bench/bench_plans.h's largest_interactive), for the tests of large schedules.
#pragma once

#include <cstdint>

#include "plansight/estimator/presets.h"

namespace plansight::estimator {

// 256 layers (so that 64 x 4 chunks divide), TP 8 x PP 64 of `vpp` chunks, DP 6, one sequence
// a micro-batch.
inline Plan trillion_64_stages(PipelineSchedule schedule, std::int64_t vpp, std::int64_t micro_batches) {
  Plan plan = default_plan();
  plan.model = *find_model("narayanan-1008b");
  plan.model.layers = 256;
  plan.cluster.gpus = 3072;
  plan.layout.tp = 8;
  plan.layout.pp = 64;
  plan.layout.vpp = vpp;
  plan.layout.schedule = schedule;
  plan.training.micro_batch = 1;
  plan.training.global_batch = micro_batches * 6;
  return plan;
}

// The same at 1,024 micro-batches with ZeRO-3, its gathers not prefetched.
inline Plan trillion_64_stages_zero3(PipelineSchedule schedule, std::int64_t vpp) {
  Plan plan = trillion_64_stages(schedule, vpp, 1024);
  plan.layout.zero_stage = 3;
  plan.training.zero3_prefetch = false;
  return plan;
}

}  // namespace plansight::estimator
