// A ZeRO-3 plan for the tests of what compute hides (time_model_test, timeline_layers_test):
// the ZeRO-stages example's model (Narayanan et al.'s 7.5B, 36 layers) on 64 A100s in 8 DGX
// nodes, pure data parallelism but for `tp`, a global batch of 64 sequences.
#pragma once

#include <cstdint>

#include "plansight/estimator/presets.h"

namespace plansight::estimator {

inline Plan zero3_7p5b_on_64(std::int64_t tp, Recompute recompute, std::int64_t micro_batch) {
  Plan plan = default_plan();
  plan.model = *find_model("narayanan-7.5b");
  plan.cluster.gpus = 64;
  plan.layout.tp = tp;
  plan.layout.pp = 1;
  plan.layout.sequence_parallel = false;
  plan.layout.zero_stage = 3;
  plan.layout.recompute = recompute;
  plan.training.global_batch = 64;
  plan.training.micro_batch = micro_batch;
  return plan;
}

}  // namespace plansight::estimator
