// The time model: per-chunk kernel and communication costs (layer_costs.h) run through the
// pipeline schedule simulator (pipeline_simulator.h) give the iteration time, its breakdown
// (compute, exposed TP/CP/PP/DP communication, bubble, optimizer) and a predicted Timeline.
// A closed form of the same quantities serves the layout search, where a simulation per
// candidate would be too slow.
#pragma once

#include <vector>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// Gradient buckets per model chunk when DP reduction overlaps the backward: PyTorch DDP's 25 MiB
// buckets (and Megatron's 40M-parameter ones) cut the chunks of models from about 1B parameters
// up into at least this many; each is reduced as soon as its gradients are ready.
inline constexpr double kDpBucketsPerChunk = 8;

struct TimeModelOptions {
  const HardwareProfile* profile = nullptr;  // measured efficiencies for this machine
  bool keep_timeline = true;                 // false: skip building the Timeline (faster)
  // A long schedule's table is made on two threads (generators::make_ranks, side_thread.h).
  // False: on the caller's thread alone, for callers that already run estimates in parallel (the
  // search).
  bool parallel_simulations = true;
};

// Everything the simulator and the closed form need, computed once per plan.
struct IterationCosts {
  // The distinct chunk costs, and per global chunk c * pp + r (ScheduleTable::global_chunk) the
  // index of its own (SimulationInput::chunks and chunk_of).
  std::vector<ChunkCost> chunks;
  std::vector<std::int32_t> chunk_of;
  std::vector<PhaseCost> chunk_forward, chunk_backward_input, chunk_backward_weight, chunk_recompute;
  std::vector<double> chunk_dp_seconds;     // gradient reduction (+ ZeRO-3 gathers) per chunk
  std::vector<double> optimizer_seconds;    // per rank: optimizer step (+ ZeRO-1/2 parameter all-gather)
  std::vector<double> optimizer_dp_seconds; // per rank: the parameter all-gather part of it
  std::vector<double> optimizer_offload_seconds;  // per rank: its host-link transfers (offload.h)
  double p2p_seconds = 0;                   // one activation (or gradient) transfer between stages
  // Bytes this GPU sends (sent_bytes(), comm_model.h): per chunk, its gradient reduction; per
  // rank, the optimizer's parameter all-gather; one transfer between stages.
  std::vector<double> chunk_dp_bytes, optimizer_dp_bytes;
  double p2p_bytes = 0;
  std::int64_t micro_batches = 1;
};

// The communication segments' labels (OpSegment::label) and the names they stand for on the
// predicted timeline, comm_span_labels()[label]: the collectives, the group's size and its link
// ("TP all-reduce · tp 8 · in a node"); kDpReduceLabel names the gradient reductions
// (SimulationInput::dp_reduce_label). Made only for a simulation, not per searched layout.
inline constexpr std::int32_t kTpLabel = 0, kCpLabel = 1, kDpLabel = 2, kEpLabel = 3, kDpReduceLabel = 4;
// The pipeline sends' group and link (SimulationInput::send_label) and ZeRO-1/2's parameter
// all-gather after the optimizer step (SimulationInput::optimizer_gather_label).
inline constexpr std::int32_t kPpLabel = 5, kOptimizerGatherLabel = 6;
// ZeRO-3's prefetched parameter all-gather and its gradient reduce-scatter where compute hides
// them (OpSegment::overlapped); what it does not hide is kDpLabel's.
inline constexpr std::int32_t kZero3GatherLabel = 7, kZero3ReduceScatterLabel = 8;
std::vector<std::string> comm_span_labels(const Plan& plan, const CommLinks& links);

// Bytes the time model charges an optimizer step per parameter (iteration_costs.cpp).
double optimizer_bytes_per_parameter(const TrainingSpec& training);

IterationCosts iteration_costs(const Plan& plan, const DeviceModel& device, const CommLinks& links,
                               std::int64_t padded_vocab);

struct TimePrediction {
  double iteration_s = 0;
  TimeBreakdown breakdown;
  // The pipeline bubble by its one definition (schedule_metrics.h): per stage, idle pipeline time
  // / the stage's compute; the mean over stages and the worst stage. The breakdown's bubble_s +
  // pp_comm_s is the first stage's bubble time (TimeBreakdown).
  double bubble_fraction = 0;
  double bubble_fraction_max = 0;
  // Ops of the schedule the simulation did not run one by one: without a timeline, periods of a
  // steady state that it moved over at once (SimulationResult::skipped_ops); 0 with a timeline.
  std::int64_t skipped_ops = 0;
  // Of the simulation's ops, those it ran one by one (SimulationResult::simulated_ops).
  std::int64_t simulated_ops = 0;
  Timeline timeline;
};

// Simulates one iteration. Errors come from the schedule (e.g. micro-batches vs pp).
Result<TimePrediction> predict_time(const Plan& plan, std::int64_t padded_vocab, const TimeModelOptions& options = {});

// The number of ops the simulation of a plan runs: pp x vpp x micro-batches x 2 (F, B), x 3 with
// the W ops of split-backward schedules (ZB-H1).
std::int64_t schedule_ops(const Plan& plan);

// The longest schedule whose predicted timeline is built (schedule_ops()): 160,000 ops (pp 8 x
// 10,000 micro-batches) make 700,000 spans, drawn as text in 0.18 s and 80 MB and written as JSON
// in 0.83 s and 370 MB on a 2-core machine (bench/results/scale-cpu.txt). Longer schedules are
// estimated (their times need no timeline) but not drawn, exported or compared span by span.
inline constexpr std::int64_t kMaxTimelineOps = 160'000;

// An error naming training.global_batch when the plan's schedule is longer than kMaxTimelineOps,
// with its op count and how many micro-batches would fit; nothing otherwise.
std::vector<Diagnostic> timeline_size_errors(const Plan& plan);

// predict_time()'s answer from the closed form below, over the same costs: for plans too long to
// simulate (EstimateOptions::max_simulated_ops). No timeline.
TimePrediction predict_time_closed_form(const Plan& plan, std::int64_t padded_vocab, const HardwareProfile* profile);

// Closed-form iteration time for uniform chunks: 1F1B and GPipe (m + p - 1)(F + B), interleaved
// (m + (p - 1)/v)(F + B) per rank, ZB-H1 m(F + B + W) + (p - 1)(F + B - W) (Qi et al. 2023),
// plus pipeline ramps' transfers, exposed DP communication and the optimizer.
TimePrediction closed_form_time(const Plan& plan, const IterationCosts& costs);

}  // namespace plansight::estimator
