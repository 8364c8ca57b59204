// Timeline metrics that are pure functions of a Timeline, so they mean the same on predicted,
// measured and imported timelines: per-rank time breakdown, compute/communication overlap (ours,
// by configurable kernel rules, with HTA's value beside it), idle gaps and pipeline bubbles.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/interval_set.h"
#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// Class of every span name, computed once: name_id -> KernelClass by the rules.
std::vector<KernelClass> classify_names(const Timeline& timeline, const KernelClassifier& classifier);

// Class of one device span: memcpy/memset are memory, collective/send/recv communication, a
// kernel by its name's class (a kernel flagged tensor_core counts as a tensor-core GEMM).
KernelClass span_class(const Span& span, const std::vector<KernelClass>& name_classes);

struct RankBreakdown {
  std::int32_t rank = 0;
  std::int64_t window_ns = 0;                 // first device-work start to last end
  std::int64_t busy_ns = 0;                   // merged device work of any class
  std::int64_t idle_ns = 0;                   // window_ns - busy_ns
  std::int64_t compute_ns = 0;                // merged compute, tensor-core GEMMs included
  std::int64_t tensor_core_ns = 0;            // merged tensor-core GEMMs
  std::int64_t communication_ns = 0;          // merged communication
  std::int64_t overlap_ns = 0;                // communication ∩ compute
  // Communication while the rank does no other device work (compute or memory), from the moment
  // its last peer arrived (peer_waiting.h): the same rule as the compare views' communication
  // phase (core/step_phases.h), so `analyze`, `compare` and the app's pages agree.
  std::int64_t exposed_communication_ns = 0;
  // Inside communication calls before the last peer arrived, with no other device work: idle time
  // spent in a call (a late peer), 0 on a predicted timeline (one rank per stage: no peers).
  std::int64_t waiting_ns = 0;
  std::int64_t memory_ns = 0;                 // merged memcpy/memset
  // Ours: overlap_ns / communication_ns with communication and compute as the rules classify them
  // (DeepEP, multimem and RCCL kernels count as communication; memory is neither). NaN when the
  // rank has no communication.
  double overlap_ratio = 0;
  // HTA's get_comm_comp_overlap for the same rank (its own name patterns), for comparison.
  double hta_overlap_ratio = 0;
};

// One row per rank, ascending. Device work = spans on device lanes that are not annotations.
std::vector<RankBreakdown> rank_breakdown(const Timeline& timeline,
                                          const KernelClassifier& classifier = KernelClassifier());

// Idle gaps of a rank's device work of at least `min_gap_ns`, between its first start and last end.
std::vector<Interval> idle_gaps(const Timeline& timeline, std::int32_t rank, std::int64_t min_gap_ns = 0);

struct BubbleOptions {
  // Ranks of the pipeline, stage 0 first. Empty: every rank of the timeline, ascending.
  std::vector<std::int32_t> pipeline_ranks;
  // Gaps shorter than this between compute spans are launch and dependency latency, not the
  // pipeline waiting for a neighbour, and are not counted (10 µs: a few kernel-launch latencies).
  std::int64_t min_gap_ns = 10'000;
};

struct StageBubble {
  std::int32_t stage = 0;      // position in the pipeline
  std::int32_t rank = 0;
  std::int64_t window_ns = 0;  // the pipeline's window: first to last pipeline compute of any stage
  std::int64_t busy_ns = 0;    // the stage's work in the window: window_ns - bubble_ns
  std::int64_t bubble_ns = 0;  // schedule_metrics.h's definition
  std::int32_t gaps = 0;       // idle stretches counted (fill, drain, gaps >= min_gap_ns)
  double fraction = 0;         // bubble_ns / busy_ns, the form the schedule papers quote
  // True when the compute set came from forward/backward/weight-grad/recompute phase tags
  // (annotations); false when it was every compute kernel of the rank (inferred from idle gaps).
  bool from_annotations = false;
};

// Whether a timeline shows pipeline parallelism: spans tagged with a stage above 0, or
// point-to-point transfers (send/recv spans, NCCL SendRecv/Send/Recv kernels).
bool is_pipelined(const Timeline& timeline);

// Pipeline bubble per stage by the one definition of schedule_metrics.h (schedule_bubbles()),
// for any timeline: measured, imported or predicted (on a predicted one, with min_gap_ns 0, the
// same numbers as schedule_bubbles()). None (empty) for a timeline that is not pipelined unless
// options.pipeline_ranks names the stages. Compute and communication are found by kernel class;
// with phase tags on every stage (timeline_annotations.h) the pipeline work is the tagged work,
// so the optimizer step stays out; without, it is every compute kernel. The fraction is bubble /
// the stage's work, (p-1)/m for GPipe/1F1B (Narayanan et al. 2021, §2.2).
std::vector<StageBubble> pipeline_bubbles(const Timeline& timeline, const BubbleOptions& options = {},
                                          const KernelClassifier& classifier = KernelClassifier());

}  // namespace plansight::estimator
