// Plan = model + cluster + layout + training, and validate(): every violated rule at once.
#pragma once

#include <vector>

#include "plansight/estimator/cluster_spec.h"
#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/layout_spec.h"
#include "plansight/estimator/model_spec.h"
#include "plansight/estimator/training_spec.h"

namespace plansight::estimator {

struct Plan {
  ModelSpec model;
  ClusterSpec cluster;
  LayoutSpec layout;
  TrainingSpec training;

  std::int64_t dp() const;            // layout.dp, or gpus / (tp * pp * cp)
  std::int64_t micro_batches() const; // per pipeline per iteration: global / (micro * dp)
  // Ranks sharing one routed expert's shard (Megatron-Core's expert-data-parallel group):
  // tp*cp*dp / (ep * etp); the distributed optimizer shards expert states over them.
  std::int64_t expert_dp() const;
};

// Errors (the plan cannot be estimated) and warnings (it can, but something deserves a look),
// each naming the field, the value and what would be valid.
std::vector<Diagnostic> validate(const Plan& plan);

}  // namespace plansight::estimator
