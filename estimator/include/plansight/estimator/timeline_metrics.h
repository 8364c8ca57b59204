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
  std::int64_t exposed_communication_ns = 0;  // communication while no compute runs
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
  std::int64_t window_ns = 0;  // the pipeline's window (first to last pipeline compute of any stage)
                               // clipped to this rank's own device work
  std::int64_t busy_ns = 0;    // merged pipeline compute of this stage inside the window
  std::int64_t bubble_ns = 0;  // gaps >= min_gap_ns in all of the rank's device work inside the window
  std::int32_t gaps = 0;       // how many such gaps
  double fraction = 0;         // bubble_ns / window_ns
  // True when the compute set came from forward/backward/weight-grad/recompute phase tags
  // (annotations); false when it was every compute kernel of the rank (inferred from idle gaps).
  bool from_annotations = false;
};

// Whether a timeline shows pipeline parallelism: spans tagged with a stage above 0, or
// point-to-point transfers (send/recv spans, NCCL SendRecv/Send/Recv kernels).
bool is_pipelined(const Timeline& timeline);

// Pipeline bubble per stage; none (empty) for a timeline that is not pipelined unless
// options.pipeline_ranks names the stages. With phase tags (see timeline_annotations.h) the
// window is that of the tagged pipeline work, so the optimizer step stays out; without, it is
// that of all compute-class device work. A bubble is idle time: gaps in all of the rank's device
// work, communication included, so it never exceeds the rank's idle time in rank_breakdown().
// The bubble fraction is the idle share of the window, the measured counterpart of the
// (p-1)/m bubble of GPipe/1F1B (Narayanan et al. 2021, §2.2).
std::vector<StageBubble> pipeline_bubbles(const Timeline& timeline, const BubbleOptions& options = {},
                                          const KernelClassifier& classifier = KernelClassifier());

}  // namespace plansight::estimator
