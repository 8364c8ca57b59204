// Phase, stage and micro-batch tags read from annotation names ("## forward ##",
// "stage 1 microbatch 3 backward", "pp_stage=2/mb=5/fwd"), and their propagation from device-side
// annotation spans (Kineto gpu_user_annotation, NVTX projected on a stream) to the device work
// they enclose, so bubble and diff metrics can use phases on imported traces.
#pragma once

#include <cstdint>
#include <string_view>

#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

struct AnnotationTags {
  Phase phase = Phase::none;
  std::int32_t stage = -1;
  std::int32_t micro_batch = -1;
  bool any() const { return phase != Phase::none || stage >= 0 || micro_batch >= 0; }
};

// Case-insensitive. Phases: weight_grad/wgrad/backward_w, recompute, backward/bwd, forward/fwd,
// optimizer/optim. Stage: "stage", "pp_stage", "pp" followed by separators and a number.
// Micro-batch: "microbatch", "micro_batch", "micro-batch", "mb" followed by a number.
// Words must stand alone ("ProfilerStep#3" is not a stage, "embedding" not "mb").
AnnotationTags parse_annotation_tags(std::string_view name);

// For every rank, each device span (not itself an annotation) takes the tags of the innermost
// annotation span on a device lane of the same rank whose interval encloses it; tags already set
// on a span are kept. Annotations on host lanes are not used: host time is launch time, not
// execution time. Returns the number of spans that got a tag.
std::int64_t propagate_annotation_tags(Timeline& timeline);

}  // namespace plansight::estimator
