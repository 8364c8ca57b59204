// Pipeline schedules as plain data: for each pipeline rank, the ordered list of ops
// {F, B, W; model chunk; micro-batch} it runs in one training iteration. The same table drives the
// estimator's simulator and the probe's real execution, so it holds no timing and no framework
// types; generators cite the paper (and for interleaving, Megatron-LM's code) they follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/enums.h"
#include "plansight/estimator/layout_spec.h"

namespace plansight::estimator {

// F: forward. B: backward; in schedules without W ops it computes both the input and the weight
// gradients, in split schedules (ZB-H1) only the input gradient. W: weight gradient.
enum class OpKind : std::uint8_t { forward, backward, weight_grad };

struct ScheduleOp {
  // Trivial: a list of n ops, ScheduleOp{} or std::vector<ScheduleOp>(n), is value-initialised,
  // every field zero (a forward of chunk 0, micro-batch 0, not paired), as one memset; an op
  // declared without an initialiser holds no values.
  ScheduleOp() = default;
  // {kind, chunk, micro_batch[, pairs_with_next]}, in that order whatever the layout below.
  constexpr ScheduleOp(OpKind k, std::int32_t c, std::int32_t mb, bool pairs = false)
      : kind(k), pairs_with_next(pairs), chunk(static_cast<std::int16_t>(c)), micro_batch(mb) {}

  OpKind kind;
  // The op starts only once the next op's input has arrived too: DualPipe's overlapped F&B pairs
  // (a forward and a backward of different micro-batches, each hiding the other's
  // communication, started when both inputs are in), and dualpipev.py's receives posted ahead of
  // an op that then waits for them.
  bool pairs_with_next;
  // No padding: every byte of an op is a field (the steady-state search compares an op as one
  // 64-bit word, steady_state.cpp).
  std::int16_t chunk;        // local model chunk on this rank, 0 .. v-1 (v <= kMaxChunksPerRank)
  std::int32_t micro_batch;  // 0 .. m-1
  friend bool operator==(const ScheduleOp&, const ScheduleOp&) = default;
};
// Model chunks a rank may hold (ScheduleOp::chunk's range): make_schedule() and check_schedule()
// refuse more. Two bytes keep an op at 8 (from 12: tables are written, read and walked per
// estimate, 3 MB at 64 stages x 2 chunks x 1024 micro-batches; bench/results/time-core-cpu.txt).
inline constexpr std::int64_t kMaxChunksPerRank = 32767;
static_assert(sizeof(ScheduleOp) == 8, "ScheduleOp stays small: tables of millions of ops are walked per simulation");
static_assert(std::is_trivial_v<ScheduleOp>);

// Ops i in [begin, end) of a rank's list each repeat as op i + period, `micro_batches`
// micro-batches later (the same kind, chunk and pairing): a run of a steady state (steady_state.h
// in the estimator's sources). period 0: none.
struct RepeatingOps {
  std::int32_t micro_batches = 0;
  std::size_t period = 0, begin = 0, end = 0;
  friend bool operator==(const RepeatingOps&, const RepeatingOps&) = default;
};

struct ScheduleTable {
  PipelineSchedule kind = PipelineSchedule::one_f_one_b;
  std::int32_t p = 1;                          // pipeline ranks
  std::int32_t v = 1;                          // model chunks per rank (virtual stages)
  std::int32_t m = 1;                          // micro-batches per iteration
  bool split_backward = false;                 // true: W ops exist and B is the input gradient only
  std::vector<std::vector<ScheduleOp>> ranks;  // ranks[r] = ops of rank r in execution order
  // make_schedule's, per rank: the widest run of its ops through the middle of its list that
  // repeats one period of its steady state later (a period of one micro-batch; of a micro-batch
  // group for the interleaved order; none for GPipe), found while the list it has just written is
  // in cache. Empty for a table made otherwise; stale once its ranks are edited, so only the
  // simulation of make_schedule's own tables reads it, to skip a walk of the whole table.
  std::vector<RepeatingOps> repeating;

  // Model chunks are numbered in pipeline order (global_chunk_of below; the same numbering as
  // LayoutSpec::stage_layers). Activations flow from global chunk g to g+1.
  std::int32_t stages() const { return p * v; }
  std::int32_t global_chunk(std::int32_t rank, std::int32_t chunk) const;
  std::int32_t rank_of(std::int32_t global) const;
  std::int32_t local_chunk_of(std::int32_t global) const { return global / p; }
  // Consecutive chunks g, g+1 sit on ranks r, r+1 (wrapping) in every schedule but DualPipe(V).
  bool v_shape() const { return kind == PipelineSchedule::dualpipev || kind == PipelineSchedule::dualpipe; }
  // Whether micro-batch mb passes through global chunk g (two_pipelines below).
  bool passes(std::int32_t g, std::int32_t mb) const;
};

// DualPipe runs two pipelines over the same ranks, one per model copy: micro-batches
// 0 .. m/2-1 enter at rank 0 and pass chunks 0 .. p-1, micro-batches m/2 .. m-1 enter at rank
// p-1 and pass chunks p .. 2p-1 (DeepSeek-AI's DualPipe repository, dualpipe.py). Every other
// schedule has one pipeline through every chunk.
constexpr bool two_pipelines(PipelineSchedule kind) { return kind == PipelineSchedule::dualpipe; }
// Whether global chunk g of p x v is the first chunk of its pipeline (the embedding's) or the
// last (the final norm, the LM head and the loss).
constexpr bool starts_pipeline(PipelineSchedule kind, std::int64_t p, std::int64_t g) {
  return g == 0 || (two_pipelines(kind) && g == p);
}
constexpr bool ends_pipeline(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t g) {
  return g == p * v - 1 || (two_pipelines(kind) && g == p - 1);
}

// The global chunk (pipeline position) of local chunk `chunk` on `rank` with p ranks: c*p + r,
// chunk 0 on ranks 0 .. p-1, then chunk 1 on ranks 0 .. p-1 again (Narayanan et al. 2021,
// Sec. 2.2.2). DualPipeV's V shape runs odd chunks back up the ranks: chunk 1 of rank r is
// 2p-1-r, so rank 0 holds the first and the last chunk (DualPipe repository, dualpipev.py).
// DualPipe places its second copy the same way: chunk 1 of rank r is stage p-1-r of the
// pipeline that runs from rank p-1 to rank 0.
constexpr std::int64_t global_chunk_of(PipelineSchedule kind, std::int64_t p, std::int64_t rank, std::int64_t chunk) {
  const bool v = kind == PipelineSchedule::dualpipev || kind == PipelineSchedule::dualpipe;
  return chunk * p + (v && chunk % 2 == 1 ? p - 1 - rank : rank);
}
// The rank that holds global chunk g.
constexpr std::int64_t rank_of_chunk(PipelineSchedule kind, std::int64_t p, std::int64_t global) {
  const std::int64_t position = global % p;
  const bool v = kind == PipelineSchedule::dualpipev || kind == PipelineSchedule::dualpipe;
  return v && (global / p) % 2 == 1 ? p - 1 - position : position;
}
inline std::int32_t ScheduleTable::global_chunk(std::int32_t rank, std::int32_t chunk) const {
  return static_cast<std::int32_t>(global_chunk_of(kind, p, rank, chunk));
}
inline std::int32_t ScheduleTable::rank_of(std::int32_t global) const {
  return static_cast<std::int32_t>(rank_of_chunk(kind, p, global));
}
inline bool ScheduleTable::passes(std::int32_t g, std::int32_t mb) const {
  return !two_pipelines(kind) || (g < p) == (mb < m / 2);
}

struct ScheduleOptions {
  // Interleaved only: Megatron-LM's microbatch_group_size_per_vp_stage, the number of consecutive
  // micro-batches run on one model chunk before moving to the next. 0 means p (Megatron's default,
  // the depth-first order of Narayanan et al. 2021).
  std::int32_t microbatch_group = 0;
  // A long table (65,536 ops or more) is made on two threads, the caller's and the estimator's
  // side thread. False: on the caller's alone, for callers that keep every core busy already
  // (the layout search's workers).
  bool two_threads = true;
};

// Generates the per-rank op order. Errors name the field to change: "layout.pp", "layout.vpp",
// "layout.schedule" or "training.global_batch" (m = global batch / (micro batch * dp)).
//  - gpipe: Huang et al. 2019 (GPipe, Sec. 2.2): all m forwards, then all m backwards. v must be 1.
//  - one_f_one_b: PipeDream-Flush (Narayanan et al. 2021, Sec. 2.2.1; Megatron-LM's
//    forward_backward_pipelining_without_interleaving): p-r-1 warm-up forwards on rank r, then
//    alternate one F and one B, then drain the remaining Bs. v must be 1.
//  - interleaved: Narayanan et al. 2021, Sec. 2.2.2, in Megatron-LM's order
//    (megatron/core/pipeline_parallel/schedules.py, get_schedule_table + get_pp_rank_microbatches).
//    Needs p >= 2, v >= 2 and p <= group <= m with m % group == 0 or m % group >= p: with the
//    default group = p that is Megatron's familiar "m divisible by p".
//  - zb_h1: Qi et al. 2023 (Zero Bubble Pipeline Parallelism, Sec. 2.1, Fig. 3 top): 1F1B with the
//    backward split into B and W, where rank r keeps r W passes deferred so that every rank holds
//    at most p micro-batches (1F1B's peak) and the deferred Ws fill the drain bubble. v must be 1.
//  - dualpipev: DualPipeV, the V-shaped "cut-in-half" DualPipe of DeepSeek-V3 (DeepSeek-AI's
//    DualPipe repository, dualpipe/dualpipev.py): two chunks per rank in a V (global_chunk_of),
//    the backward split into B and W with some Ws deferred. Needs v = 2 and m >= 2p.
//  - dualpipe: DualPipe, DeepSeek-V3's bidirectional schedule (DeepSeek-AI's DualPipe
//    repository, dualpipe/dualpipe.py): two model copies, one pipeline each way
//    (two_pipelines), rank r holding stage r of the first and stage p-1-r of the second; half
//    the micro-batches enter at each end. Needs p even, v = 2, m even and m >= 2p.
Result<ScheduleTable> make_schedule(PipelineSchedule kind, std::int64_t p, std::int64_t v,
                                    std::int64_t m, ScheduleOptions options = {});

// Same, with kind, p and v taken from the layout (schedule, pp, vpp).
Result<ScheduleTable> make_schedule(const LayoutSpec& layout, std::int64_t micro_batches,
                                    ScheduleOptions options = {});

// Checks that the table is well formed: every rank runs F and B (and W when split) exactly once
// for each of its (chunk, micro-batch) pairs, and on each rank F precedes B precedes W for the
// same pair. Cross-rank deadlocks are found by simulate() (pipeline_simulator.h).
std::vector<Diagnostic> check_schedule(const ScheduleTable& table);

// Peak number of in-flight chunk-micro-batches per rank: a (chunk, micro-batch) is in flight from
// the end of its F until its last backward op (W when the schedule splits the backward, else B),
// since its stored activations live that long. Found by walking each rank's op list.
// For 1F1B it is min(p - r, m); GPipe m; interleaved rank 0 min(v*p + p - 1, v*m) (so rank 0
// stores 1 + (p-1)/(p*v) times a stage's p micro-batches: Korthikanti et al. 2022, Sec. 4,
// pipeline parallelism).
std::vector<std::int32_t> peak_in_flight(const ScheduleTable& table);

// Walking one rank's ops, the number of stored forwards of each local chunk (0 .. v-1) at the
// moment their weighted sum (weight: a chunk's activation per micro-batch, e.g. its layers) is
// largest. A forward is stored until its W when the backward is split, else until its B
// (peak_in_flight's rule), so a deferred W keeps its micro-batch's activation.
std::vector<std::int32_t> in_flight_at_peak(const std::vector<ScheduleOp>& ops, bool split_backward,
                                            const std::vector<double>& chunk_weight);

// Short op label, e.g. "F", "B", "W".
char op_letter(OpKind kind);

}  // namespace plansight::estimator
