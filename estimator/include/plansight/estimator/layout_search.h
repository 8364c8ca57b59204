// Layout search: every TP x CP x PP x VPP x DP x micro-batch x recomputation x ZeRO stage x
// sequence parallel x schedule of a base plan's model, cluster and batch, ranked by throughput.
// Candidates are costed with the closed-form time model from layer costs computed once per
// (tp, cp, sequence parallel, micro-batch, recomputation), on all cores; the best few are then
// re-ranked with the full estimate() (simulated schedule). Results do not depend on thread count.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// Values to try per dimension; an empty list means every sensible value:
// tp, cp, pp: the divisors of cluster.gpus (dp is what remains); vpp: the divisors >= 2 of
// model.layers (interleaved only); micro-batch: powers of two up to max_micro_batch and the
// global batch; zero 0-3; all recomputations and schedules. With pp = 1 only 1f1b is tried
// (the schedules coincide), and sequence parallelism only with tp > 1 (it does nothing at tp 1).
// Bounds narrow a dimension further (inclusive); a value must pass both its list and its bound.
struct SearchBound {
  std::int64_t min = 0;
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  bool contains(std::int64_t v) const { return v >= min && v <= max; }
};

// One offloading to try (LayoutSpec's offload flags); all false: none.
struct OffloadChoice {
  bool optimizer = false, params = false, activations = false;
  friend bool operator==(const OffloadChoice&, const OffloadChoice&) = default;
};

struct SearchSpace {
  std::vector<std::int64_t> tp, cp, pp, dp, vpp, micro_batch, zero_stage;
  SearchBound tp_bound, cp_bound, pp_bound, dp_bound, vpp_bound, micro_batch_bound;
  // MoE models only (layout_search_moe.cpp): ep defaults to every divisor of the experts that
  // fits the stage's ranks, etp to {1, tp} (Megatron-Core's two common choices).
  std::vector<std::int64_t> ep, etp;
  std::vector<Recompute> recompute;
  std::vector<PipelineSchedule> schedule;
  // Compute precisions to try (gradients follow each: gradient_precision_for); empty: the base
  // plan's alone. Each runs the whole search with its own memory and time (fp8: Transformer
  // Engine's copies and casts); the results merge by the same ranking. Precisions the GPU has no
  // peak for are skipped and named in SearchResult::skipped_precisions.
  std::vector<Precision> precision;
  // Offloadings to try, each searched with its costs (host memory, host-link transfers, the CPU
  // optimizer step) and only with the ZeRO stages it runs with; empty: the plan's own.
  std::vector<OffloadChoice> offload;
  std::optional<bool> sequence_parallel;
  std::int64_t max_micro_batch = 64;
  // The rules validate() warns about (plan.cpp): context parallelism runs on flash attention
  // kernels only, and ZeRO-2/3 is not combined with pipeline parallelism by DeepSpeed or
  // Megatron-LM. On, such layouts are rejected so the search never ranks what the plan page
  // would flag; off, they are costed as the model describes them (e.g. for FSDP2 + PP).
  bool framework_rules = true;
};

struct SearchOptions {
  SearchSpace space;
  std::size_t top = 5;        // layouts returned
  std::size_t simulate = 3;   // the best top * simulate by closed form are re-ranked by estimate()
  // A re-ranked layout whose schedule has more ops than this keeps its closed-form time
  // (EstimateOptions::max_simulated_ops): the simulator runs 20-35 M ops/s on one core and an
  // estimate simulates twice (bench/results/pipeline-simulator-cpu.txt), so 1 M ops bound each
  // re-ranked layout to about 0.1 s and the whole search stays under a second even at 100,000
  // GPUs and 10,000 micro-batches. 0: simulate every re-ranked layout.
  std::int64_t max_simulated_ops = 1'000'000;
  unsigned threads = 0;       // 0: std::thread::hardware_concurrency()
};

// One point of the search space, in compact form.
struct Candidate {
  std::int64_t tp = 1, pp = 1, vpp = 1, dp = 1, cp = 1, micro_batch = 1, zero_stage = 0;
  Recompute recompute = Recompute::none;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  bool sequence_parallel = false;
  std::int64_t ep = 1, etp = 0;  // expert parallelism (MoE models); etp 0 = tp
};

// The base plan with the candidate's layout and micro-batch (dp explicit, uniform stages, the
// base's offloading, and no given throughput, so estimate() predicts the time). MoE models whose
// layers pp * vpp does not divide get the earliest chunks one layer more (layout.stage_layers).
Plan apply_candidate(const Plan& base, const Candidate& candidate);
std::string describe(const Candidate& candidate);  // "TP 8 PP 4 (v 2) DP 16 CP 1 mb 1 ..."

// Why a candidate was dropped; the first failing check in this order is the one counted.
enum class RejectReason : std::uint8_t {
  tp_heads,                   // tp does not divide heads or kv_heads
  tp_ffn,                     // tp does not divide ffn_hidden
  cp_sequence,                // seq_len not divisible by 2 * cp
  cp_attention,               // framework rule: cp > 1 needs flash attention
  layer_split,                // pp * vpp does not divide layers
  global_batch,               // global batch not divisible by micro_batch * dp
  interleaved_micro_batches,  // interleaved: micro-batches per pipeline not divisible by pp
  zero_pipeline,              // framework rule: ZeRO-2/3 with pp > 1
  expert_layout,              // MoE: ep does not divide the experts, or ep*etp the stage's ranks, or etp the expert width
  memory,                     // the most loaded GPU needs more than its memory
};
inline constexpr std::size_t kRejectReasonCount = 10;
std::string_view to_string(RejectReason reason);  // "tp does not divide heads", ...

struct Rejection {
  RejectReason reason = RejectReason::memory;
  std::int64_t count = 0;
  Candidate first;     // the first rejected for this reason, in enumeration order
  std::string detail;  // why `first` was rejected, with the numbers
  // Memory only: the rejected candidate that came closest to fitting.
  Candidate closest;
  double closest_bytes = 0;
};

struct RankedLayout {
  Candidate candidate;
  Plan plan;                           // apply_candidate(base, candidate)
  Estimate estimate;                   // estimate(plan): simulated time (unless time.simulated is false), memory
  double closed_form_iteration_s = 0;  // what the search ranked it by
  double closed_form_tokens_per_s = 0;
};

struct SearchResult {
  // Best first by tokens/s; throughputs within ~0.01% tie and the one needing less memory wins.
  std::vector<RankedLayout> layouts;
  std::int64_t enumerated = 0;        // == fitting + the sum of rejection counts
  std::int64_t evaluated = 0;         // passed the integer checks: memory (and time if it fits) computed
  std::int64_t fitting = 0;
  std::vector<Rejection> rejections;  // reasons with count > 0, most frequent first
  std::size_t simulated = 0;          // layouts re-ranked by a simulated estimate (others: closed form, max_simulated_ops)
  unsigned threads = 1;
  double closed_form_seconds = 0;     // enumeration and closed form, the part layouts/s measures
  double seconds = 0;                 // the whole search, re-ranking included
  std::vector<Precision> skipped_precisions;  // SearchSpace::precision the GPU cannot run
};

// Errors: the base plan's own problems (model, cluster, precision support, training fields) and
// a search space with nothing in it.
Result<SearchResult> search_layouts(const Plan& base, const SearchOptions& options = {});

// search_layouts()'s final order: faster first (within ~0.01% a tie), then less memory.
bool ranks_before(const RankedLayout& a, const RankedLayout& b);

// Adds the counts of a search over part of a space (or one variant of the plan) to `into`:
// enumerated, evaluated, fitting, simulated, closed-form seconds, the most threads, skipped
// precisions, and rejections merged by reason (the first part's example, the closest memory miss
// of all), most frequent first. Layouts and `seconds` are the caller's to merge.
void add_search_counts(SearchResult& into, const SearchResult& part);

// One line per rejection reason; when nothing fits it starts by naming the constraint that
// removed most candidates ("no layout fits: 1,234 of 1,300 candidates do not fit in memory").
std::string rejection_summary(const SearchResult& result);

// The search's own closed-form figures for one valid plan with uniform stages (no stage_layers),
// for tests and benchmarks: they equal estimate_memory() and closed_form_time(iteration_costs()).
struct ClosedFormFigures {
  double iteration_s = 0;
  TimeBreakdown breakdown;
  MemoryBreakdown peak;  // the most loaded GPU
  std::int64_t most_loaded_stage = 0;
  bool fits = false;
};
ClosedFormFigures search_closed_form(const Plan& plan);

}  // namespace plansight::estimator
