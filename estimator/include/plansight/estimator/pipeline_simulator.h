// Dependency-driven simulation of one training iteration of a pipeline schedule, producing a
// predicted Timeline. Each rank runs its op list in order on its compute lane; an op starts when
// the previous op on the rank has ended and its inputs have arrived. Communication (exposed TP
// segments, p2p sends, DP reductions, ZeRO-3 gathers) shares one communication lane per rank.
// Times are integer nanoseconds inside; inputs are double seconds (DESIGN.md, units).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// One piece of an op: runs on the compute lane (GEMMs, attention) or the communication lane
// (e.g. the tensor-parallel all-reduce closing a layer). The op's segments run one after another;
// while a communication segment runs the compute lane waits, so exposed TP time shows as a
// collective span on the communication lane facing idle compute.
struct OpSegment {
  Lane lane = Lane::compute;  // compute or communication
  double seconds = 0;
  double flops = 0;  // copied to the span
  double bytes = 0;  // copied to the span
  // A communication segment of one group's collectives: the span is named
  // SimulationInput::labels[label] ("TP all-reduce · tp 8 · in a node") instead of the op's name.
  std::int32_t label = -1;
  // A collective that runs beside the op's compute and is hidden by it (a prefetched ZeRO-3
  // gather, CP's ring exchange under attention): it takes none of the op's time and books no
  // lane; with the timeline kept it is drawn on the rank's overlapped-communication track,
  // back to back with the op's other overlapped segments from the op's start, cut at its end.
  // Segments labelled SimulationInput::own_track_label get a track of their own when a plan
  // hides others too (they run at the same time), drawn from the op's start as well.
  bool overlapped = false;
};

struct OpCost {
  std::vector<OpSegment> segments;  // empty: the op takes no time
  double seconds() const;           // sum of segments, the overlapped ones left out
};
OpCost compute_cost(double seconds);  // one compute segment

// Cost of one model chunk (virtual stage) for one micro-batch.
struct ChunkCost {
  OpCost forward;
  // Input gradient (B). In schedules without W ops a B runs `backward` then `weight_grad`, all
  // drawn as phase backward; split schedules (ZB-H1) run `weight_grad` as the separate W op.
  OpCost backward;
  OpCost weight_grad;
  OpCost recompute;  // re-run forward parts before each backward (full/selective recomputation)
  double send_activation_seconds = 0;  // after F, to the rank of the next chunk (p2p)
  double send_gradient_seconds = 0;    // after B, to the rank of the previous chunk (p2p)
  double dp_reduce_seconds = 0;        // data-parallel reduction of this chunk's gradients
  double dp_reduce_bytes = 0;          // what this GPU sends in it (on its spans)
  double param_gather_seconds = 0;     // ZeRO-3/FSDP all-gather before first F and first B
  bool param_prefetch = true;          // issue it when the previous op starts; false: at the op
};

enum class DpReduceIssue : std::uint8_t {
  per_chunk,  // when a chunk's last backward op ends (Megatron's overlap_grad_reduce)
  at_end,     // all chunks after the rank's last backward op (no overlap)
};

struct SimulationInput {
  // Indexed by global chunk c*p + r (ScheduleTable::global_chunk); one entry: every chunk alike.
  // With chunk_of: the distinct costs, chunk g's being chunks[chunk_of[g]].
  std::vector<ChunkCost> chunks;
  // Empty, or one entry per global chunk: the index of its cost in `chunks`. Chunks that cost the
  // same (every middle chunk of a uniform model) then share one entry, built, copied and
  // converted once.
  std::vector<std::int32_t> chunk_of = {};
  double optimizer_seconds = 0;  // per rank, after all its reductions
  // After the optimizer step: ZeRO-1/2's all-gather of the updated parameter shards (Rajbhandari
  // et al. 2020, Sec. 5.1), a collective on the communication lane with its own span, named
  // labels[optimizer_gather_label] ("parameter all-gather" when -1).
  double optimizer_gather_seconds = 0;
  double optimizer_gather_bytes = 0;  // what this GPU sends in it
  std::int32_t optimizer_gather_label = -1;
  DpReduceIssue dp_issue = DpReduceIssue::per_chunk;
  // per_chunk only: the chunk's reduction is split into this many equal buckets, bucket i issued
  // at (i+1)/n of its last backward op (gradients of later layers are ready first), so buckets
  // overlap the rest of that backward (PyTorch DDP / Megatron gradient buckets).
  std::int32_t dp_buckets = 1;
  // Processor sharing (ClusterSpec::shared_processors): every pipeline rank is run by
  // `threads_per_rank` identical threads (its TP x DP x CP copies), and all threads share
  // `shared_processors` processors. When the threads outnumber them, a computing rank slows down
  // while others compute (fluid processor sharing; communication keeps its time). 0: each
  // thread has its own processor.
  std::int64_t shared_processors = 0;
  std::int64_t threads_per_rank = 1;
  std::string title = "predicted iteration";
  std::vector<std::string> labels = {};  // names of labelled segments (OpSegment::label)
  // The name of data-parallel reduction spans: labels[dp_reduce_label]; -1: "dp <chunk>".
  std::int32_t dp_reduce_label = -1;
  // Overlapped segments with this label run beside the others (TP's inside the GEMMs on NVLink,
  // while ZeRO-3 gathers over the NICs): their own overlapped track when both occur; -1: none.
  std::int32_t own_track_label = -1;
  // Pipeline sends are named "send F3.1" (F: activation, B: gradient; chunk 3, micro-batch 1),
  // followed by " · " + labels[send_label] (the group and its link) when it is not -1.
  std::int32_t send_label = -1;
  // false: no timeline is built. The result keeps every figure (times and bubbles, identical to a
  // kept run's) but has no spans and no names: for callers that read only figures (the time
  // model's breakdown, the search's re-ranking). Building spans and names is most of a
  // simulation's cost (bench/results/estimate-cpu.txt).
  bool keep_timeline = true;
};

struct SimulationResult {
  // Tracks 2r (rank r, compute) and 2r+1 (rank r, communication). Spans: stage = global chunk,
  // micro_batch; names "<F|B|W|R><global chunk>.<micro-batch>" (e.g. "F3.1": forward of chunk 3,
  // micro-batch 1), "send F3.1" / "send B3.1" (+ the send label), "dp 3", "gather F3" / "gather B3",
  // "optimizer" and the optimizer's parameter all-gather.
  Timeline timeline;
  std::int64_t iteration_ns = 0;             // end of the last span (optimizer steps included)
  std::vector<std::int64_t> busy_ns;         // per rank: compute-lane time of F, B, W, R
  std::vector<std::int64_t> compute_end_ns;  // per rank: end of its last F/B/W op
  std::vector<std::int64_t>
      reduce_wait_ns;                   // per rank: last op end -> optimizer start (exposed DP)
  // Per rank, the bubble by schedule_bubbles()'s definition (schedule_metrics.h), equal to
  // schedule_bubbles() of the kept timeline; recorded as the simulation runs, timeline or not.
  std::vector<std::int64_t> bubble_ns;
  double bubble_fraction = 0;      // mean over ranks of bubble_ns / busy_ns
  // The first rank's pipeline sends while it does no work (no compute, no optimizer step): the
  // exposed part of its send time by rank_breakdown()'s rule (timeline_metrics.h), timeline or not.
  std::int64_t first_rank_exposed_send_ns = 0;
  double bubble_fraction_max = 0;  // the worst rank's
  // Ops of the steady state that were not simulated one by one: without a timeline, once two
  // consecutive periods of the schedule leave the run in the same state shifted in time, the
  // periods that can only repeat it are skipped with every figure above moved on exactly as
  // simulating them would (steady_state.h). 0 with a timeline, or when the schedule has no
  // steady state long enough.
  std::int64_t skipped_ops = 0;
  // Ops simulated one by one: with a timeline all of them, without all but the skipped ones. The
  // time model's run of DualPipe whose two pipelines cost the same (predict_time) simulates the
  // lower half of the ranks only: rank p-1-r runs rank r's ops on the other pipeline at the same
  // times, so its figures are rank r's (estimator/src/simulation_costs.h).
  std::int64_t simulated_ops = 0;
};

// Errors: chunk count not 1 or p*v without chunk_of ("simulation.chunks"), chunk_of not p*v
// indices of chunks ("simulation.chunk_of"), negative or non-finite durations,
// dp_buckets < 1, shared_processors < 0 or threads_per_rank < 1, a malformed table (check_schedule) or a deadlock ("schedule", naming the rank
// and op every blocked rank waits on).
Result<SimulationResult> simulate(const ScheduleTable& table, const SimulationInput& input);

}  // namespace plansight::estimator
