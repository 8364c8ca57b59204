// The predicted timeline layer by layer: every collective as its own span.
//
// The time model charges each op (a chunk's forward, backward or recomputation for one
// micro-batch) its compute and, per group, the collectives it cannot hide, as a few segments run
// back to back (iteration_costs.cpp). A Megatron-style layer interleaves them: its attention
// block, the tensor-parallel all-reduce of the block's output (with sequence parallelism: an
// all-gather before the block and a reduce-scatter after it), its MLP block (a MoE layer's
// experts between the all-to-all dispatch and combine) and the MLP's all-reduce; the backward
// runs the layers in reverse, each collective at the input of its block (Shoeybi et al. 2019,
// Fig. 3, operators f and g; Korthikanti et al. 2022, Fig. 5 for g and g-bar). layer_timeline()
// lays each op out that way, inside the same window: the op's start and end, every group's total
// time and bytes and the compute total are the simulation's, so the busy and compute time of each
// rank and the bubble of each stage read from it stay what they were (the overlap of
// communication with compute may move by up to the sends: a send still running when the next op
// starts meets that op's first pieces, a collective now where its compute was). How an op's compute
// splits between its layers, blocks, embedding and head is the operator model's
// (operator_costs.h); how its time of a group splits between its collectives is their cost
// model's (comm_model.h).
//
// The pipeline's sends move to a track of their own per rank ("... p2p", stream 1): a send still
// running when the next op starts would meet that op's first collective (with sequence
// parallelism, an all-gather before its first attention block), as it does on a GPU, where the
// transfers run on a stream of their own. An op is left as one block when something else shares
// its window on the communication lane (a gradient bucket or a gather placed while it computes,
// a collective that waited for the lane): its pieces would overlap that work.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// Spans a layer timeline may hold: a few per layer of every op (about 100 bytes each).
inline constexpr std::size_t kMaxLayerTimelineSpans = 4'000'000;

struct LayerTimelineOptions {
  std::size_t max_spans = kMaxLayerTimelineSpans;
  const HardwareProfile* profile = nullptr;  // the one predict_time() was given
};

struct LayerTimeline {
  Timeline timeline;
  std::int64_t ops_laid_out = 0;  // ops shown layer by layer
  std::int64_t ops_kept = 0;      // ops left as one block (see above)
};

// `predicted` must be predict_time()'s timeline of `plan` (padded_vocab as given to it). Errors:
// "timeline" when it is not a predicted timeline of this plan's ranks and chunks; "timeline.layers"
// when the result would exceed max_spans (the message says how many it would take).
Result<LayerTimeline> layer_timeline(const Plan& plan, std::int64_t padded_vocab, const Timeline& predicted,
                                     const LayerTimelineOptions& options = {});

}  // namespace plansight::estimator
