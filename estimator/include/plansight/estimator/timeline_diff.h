// Difference of two timelines (predicted vs measured, before vs after a change): device time per
// phase and per kernel class, and the makespan, so a user sees where the time moved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

struct DiffRow {
  std::string key;          // "forward", "communication", ...
  std::int64_t a_ns = 0;    // summed span durations in timeline a (all ranks)
  std::int64_t b_ns = 0;
  std::int64_t delta_ns = 0;  // b - a
  double ratio = 0;           // b / a; NaN when a is 0
};

struct TimelineDiff {
  DiffRow makespan;                  // end - begin of each timeline
  std::int32_t a_ranks = 0, b_ranks = 0;
  std::vector<DiffRow> by_phase;         // every Phase, in enum order
  std::vector<DiffRow> by_kernel_class;  // every KernelClass, in enum order
};

// Device work only (no annotations, idle markers or host spans). Durations are summed, not
// merged: two streams busy at once count twice, which is what makes per-phase sums add up.
TimelineDiff diff_timelines(const Timeline& a, const Timeline& b,
                            const KernelClassifier& classifier = KernelClassifier());

}  // namespace plansight::estimator
