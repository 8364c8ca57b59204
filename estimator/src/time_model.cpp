// predict_time(): simulate the schedule over the plan's chunk costs and split the iteration into
// compute, exposed communication, bubble and optimizer time on the first pipeline rank.
// closed_form_time(): the same quantities without simulation, for the layout search.
#include "plansight/estimator/time_model.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "plansight/estimator/pipeline_schedule.h"
#include "closed_form.h"
#include "schedule_generators.h"
#include "schedule_rows.h"
#include "simulation_costs.h"
#include "steady_state.h"

namespace plansight::estimator {
namespace {

// The schedule table this thread made last, kept for its next estimate: an edit that keeps the
// layout's schedule, stages, virtual stages and micro-batches (a model's width, the GPU, the
// precision, ZeRO, recomputation...) simulates the same table, and making a 64 x 4 x 1024
// interleaved one, sparse, took 0.23 ms of a 2 ms estimate (bench/results/time-core-cpu.txt,
// 2026-11-28). Per thread, like the engine's other arrays: a table another core wrote costs more
// to read than to make. A table's ops are never changed after it is made (a sparse table's middle
// is written once, as its runs reach it: the same ops for every run), so any run may read it.
struct TableKey {
  PipelineSchedule kind;  // the table's (DualPipe's lower half: DualPipeV)
  std::int64_t p, v, m;
  bool sparse, mirrored;
  friend bool operator==(const TableKey&, const TableKey&) = default;
};
// Larger tables are made for each estimate and freed after it (a thread keeps no more than this).
constexpr std::size_t kKeptTableBytes = std::size_t{16} << 20;

Result<std::shared_ptr<const SimulationTable>> kept_table(const TableKey& key, const ScheduleOptions& options) {
  thread_local std::optional<std::pair<TableKey, std::shared_ptr<const SimulationTable>>> kept;
  if (kept && kept->first == key) return kept->second;
  // Freed before the new one is made, so that it takes the same memory: a sparse table's block of
  // ops goes to the thread's next table (schedule_rows.cpp, take_block). Kept while the new one
  // was made, a DualPipeV table's pages were faulted in afresh: 2 -> 400 faults an estimate.
  kept.reset();
  auto made = key.mirrored ? make_dualpipe_lower_half_table(2 * key.p, 2 * key.m, options, key.sparse)
                           : make_simulation_table(key.kind, key.p, key.v, key.m, options, key.sparse);
  if (!made) return made.errors();
  auto table = std::make_shared<const SimulationTable>(std::move(*made));
  const auto bytes = static_cast<std::size_t>(key.p) * generators::ops_per_rank(key.kind, key.v, key.m) * sizeof(ScheduleOp);
  if (bytes <= kKeptTableBytes) kept.emplace(key, table);
  return table;
}

// One rank's per-micro-batch sums over its chunks (closed_form.h).
closed_form::RankSums rank_sums(const Plan& plan, const IterationCosts& c, std::int64_t rank) {
  closed_form::RankSums s;
  const std::int64_t p = plan.layout.pp;
  for (std::int64_t chunk = 0; chunk < plan.layout.vpp; ++chunk) {
    const auto g = static_cast<std::size_t>(global_chunk_of(plan.layout.schedule, p, rank, chunk));
    s.add(c.chunk_forward[g], c.chunk_backward_input[g], c.chunk_backward_weight[g], c.chunk_recompute[g],
          c.chunk_dp_seconds[g], 1);
  }
  return s;
}

// The simulator's input; the chunk costs are moved out of `c` (rank_sums() reads the phase
// costs, not these).
SimulationInput simulation_input(const Plan& plan, IterationCosts& c, const CommLinks& links, bool keep_timeline) {
  SimulationInput in;
  in.chunks = std::move(c.chunks);
  in.chunk_of = std::move(c.chunk_of);
  // The slowest rank's optimizer: its step on the compute lane, then its parameter all-gather
  // (ZeRO-1/2) as a collective of its own; together as long as before they were split.
  const auto slowest = static_cast<std::size_t>(
      std::max_element(c.optimizer_seconds.begin(), c.optimizer_seconds.end()) - c.optimizer_seconds.begin());
  in.optimizer_gather_seconds = c.optimizer_dp_seconds[slowest];
  in.optimizer_gather_bytes = c.optimizer_dp_bytes[slowest];
  in.optimizer_seconds = c.optimizer_seconds[slowest] - in.optimizer_gather_seconds;
  in.optimizer_gather_label = kOptimizerGatherLabel;
  in.send_label = kPpLabel;
  in.dp_issue = plan.layout.dp_overlap ? DpReduceIssue::per_chunk : DpReduceIssue::at_end;
  in.dp_buckets = plan.layout.dp_overlap ? static_cast<std::int32_t>(kDpBucketsPerChunk) : 1;
  in.shared_processors = plan.cluster.shared_processors;
  in.threads_per_rank = plan.layout.tp * plan.dp() * plan.layout.cp;
  in.keep_timeline = keep_timeline;
  if (keep_timeline) in.title = "predicted: " + plan.model.name;
  in.labels = comm_span_labels(plan, links);  // the segments' labels index these, kept or not
  in.dp_reduce_label = kDpReduceLabel;
  in.own_track_label = kTpLabel;  // layout.tp_overlap's collectives, beside ZeRO-3's, CP's, EP's
  return in;
}

// The communication volume of one GPU of the first pipeline stage (TimeBreakdown::*_bytes).
void add_volume(TimeBreakdown& b, const Plan& plan, const IterationCosts& c) {
  const std::int64_t p = plan.layout.pp, total = p * plan.layout.vpp;
  const double m = static_cast<double>(c.micro_batches);
  for (std::int64_t chunk = 0; chunk < plan.layout.vpp; ++chunk) {
    const auto g = static_cast<std::size_t>(global_chunk_of(plan.layout.schedule, p, 0, chunk));  // rank 0's chunks
    for (const PhaseCost* ph : {&c.chunk_forward[g], &c.chunk_backward_input[g], &c.chunk_backward_weight[g], &c.chunk_recompute[g]}) {
      b.tp_bytes += m * ph->tp_bytes;
      b.cp_bytes += m * ph->cp_bytes;
      b.dp_bytes += m * ph->dp_bytes;
      b.ep_bytes += m * ph->ep_bytes;
    }
    b.dp_bytes += c.chunk_dp_bytes[g];
    // Each micro-batch's activation goes on after every chunk but the last; its gradient goes
    // back before every chunk but the first; to another rank (DualPipeV's turn stays on one).
    const auto global = static_cast<std::int64_t>(g);
    // DualPipe's two pipelines meet nowhere: chunk p - 1 ends one, p starts the other.
    const bool boundary_after = ends_pipeline(plan.layout.schedule, p, plan.layout.vpp, global);
    const bool boundary_before = starts_pipeline(plan.layout.schedule, p, global);
    auto crosses = [&](std::int64_t to) {
      if ((to > global && boundary_after) || (to < global && boundary_before)) return 0.0;
      return to >= 0 && to < total && rank_of_chunk(plan.layout.schedule, p, to) != 0 ? 1.0 : 0.0;
    };
    b.pp_bytes += m * c.p2p_bytes * (crosses(global + 1) + crosses(global - 1));
  }
  b.dp_bytes += c.optimizer_dp_bytes[0];
}

double rank_idle_s(const SimulationResult& sim, double busy_s, double optimizer_s) {
  return std::max(0.0, static_cast<double>(sim.iteration_ns) * 1e-9 - busy_s - optimizer_s);
}

}  // namespace

std::int64_t schedule_ops(const Plan& plan) {
  const PipelineSchedule s = plan.layout.schedule;
  const std::int64_t kinds = s == PipelineSchedule::zb_h1 || s == PipelineSchedule::dualpipev || s == PipelineSchedule::dualpipe ? 3 : 2;
  // DualPipe: each chunk sees the half of the micro-batches of its pipeline.
  const std::int64_t per_chunk = std::max<std::int64_t>(plan.micro_batches(), 0) / (two_pipelines(s) ? 2 : 1);
  return plan.layout.pp * plan.layout.vpp * per_chunk * kinds;
}

namespace {

// "M micro-batches x K ops = N" of the plan's schedule, and the most micro-batches the schedule
// accepts (a multiple of pp for interleaving, an even count for DualPipe: pipeline_schedule.cpp)
// whose ops stay within kMaxTimelineOps.
struct ScheduleSize {
  std::string text;
  std::int64_t fitting_micro_batches = 0;
};
ScheduleSize schedule_size(const Plan& plan, std::int64_t ops) {
  const std::int64_t per_micro_batch = std::max<std::int64_t>(ops / std::max<std::int64_t>(plan.micro_batches(), 1), 1);
  std::int64_t fit = kMaxTimelineOps / per_micro_batch;
  if (plan.layout.schedule == PipelineSchedule::interleaved) fit -= fit % plan.layout.pp;
  if (plan.layout.schedule == PipelineSchedule::dualpipe) fit -= fit % 2;
  return {std::to_string(plan.micro_batches()) + " micro-batches x " + std::to_string(per_micro_batch) +
              " ops = " + std::to_string(ops),
          fit};
}

}  // namespace

std::vector<Diagnostic> timeline_size_errors(const Plan& plan) {
  const std::int64_t ops = schedule_ops(plan);
  if (ops <= kMaxTimelineOps) return {};
  const ScheduleSize size = schedule_size(plan, ops);
  return {make_error("training.global_batch",
                     "the schedule has " + size.text + " ops, more than the " + std::to_string(kMaxTimelineOps) +
                         " a predicted timeline is built for; its times are in the estimate; for a timeline "
                         "use at most " + std::to_string(size.fitting_micro_batches) + " micro-batches")};
}

TimePrediction predict_time_closed_form(const Plan& plan, std::int64_t padded_vocab, const HardwareProfile* profile) {
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu), profile);
  const CommLinks links = plan_links(plan, device.efficiency());
  return closed_form_time(plan, iteration_costs(plan, device, links, padded_vocab));
}

Result<TimePrediction> predict_time(const Plan& plan, std::int64_t padded_vocab, const TimeModelOptions& options) {
  const DeviceEfficiency efficiency = default_efficiency(plan.cluster.gpu);
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, efficiency, options.profile);
  const CommLinks links = plan_links(plan, device.efficiency());
  IterationCosts costs = iteration_costs(plan, device, links, padded_vocab);

  SteadyPeriods periods;  // the steady state the run below searches for
  SimulationInput input = simulation_input(plan, costs, links, options.keep_timeline);
  if (shares_processors(input, plan.layout.pp)) {
    // Ranks sharing processors advance together in time order, op by op, and draw their timeline
    // whatever is asked (their bubble is the timeline's; shared_processor_simulator.cpp): the
    // timeline's bound holds for them, and keeps the estimate under a second (64 ranks at the
    // bound: 0.24-0.6 s on a 2-core machine, BM_EstimateSharedProcessorsAtTheLimit; 64 x 4 x 1,024
    // interleaved took 2.5 s).
    const std::int64_t ops = schedule_ops(plan);
    if (ops > kMaxTimelineOps) {
      const ScheduleSize size = schedule_size(plan, ops);
      return make_error("cluster.shared_processors",
                        "value " + std::to_string(plan.cluster.shared_processors) + ": ranks that share processors are "
                        "simulated op by op with their timeline, at most " + std::to_string(kMaxTimelineOps) +
                        " schedule ops, and this plan has " + size.text + "; use at most " +
                        std::to_string(size.fitting_micro_batches) +
                        " micro-batches, or 0 shared processors (a device for every rank)");
    }
  }
  // DualPipe with the same costs in both pipelines: its lower half stands for every rank
  // (simulation_costs.h), half the table and half the ops.
  const bool mirrored = plan.layout.schedule == PipelineSchedule::dualpipe && dualpipe_mirrors(input, plan.layout.pp);
  const std::int64_t p = plan.layout.pp, micro_batches = plan.micro_batches();
  // The table's kind and size as simulated (DualPipe's lower half: a V of half the ranks).
  const PipelineSchedule table_kind = mirrored ? PipelineSchedule::dualpipev : plan.layout.schedule;
  const std::int64_t table_p = mirrored ? p / 2 : p, table_v = mirrored ? 2 : plan.layout.vpp,
                     table_m = mirrored ? micro_batches / 2 : micro_batches;
  ScheduleOptions schedule_options;
  schedule_options.two_threads = options.parallel_simulations;  // a long table: generators::make_ranks
  // Without a timeline the table may be sparse (schedule_rows.h): the run skips its middle.
  const bool sparse = !input.keep_timeline && !shares_processors(input, plan.layout.pp);
  auto schedule = kept_table(TableKey{table_kind, table_p, table_v, table_m, sparse, mirrored}, schedule_options);
  if (!schedule) return schedule.errors();
  auto sim = mirrored ? simulate_dualpipe_lower_half(**schedule, input, &periods)
                      : simulate_well_formed(**schedule, input, &periods);
  if (!sim) return sim.errors();

  TimePrediction out;
  out.iteration_s = static_cast<double>(sim->iteration_ns) * 1e-9;
  const closed_form::RankSums r0 = rank_sums(plan, costs, 0);
  const double m = static_cast<double>(costs.micro_batches);
  auto& b = out.breakdown;
  b.compute_s = m * r0.compute;
  b.tp_comm_s = m * r0.tp;
  b.cp_comm_s = m * r0.cp;
  b.ep_comm_s = m * r0.ep;
  const double gather = costs.optimizer_dp_seconds[0];
  const double step_offload = costs.optimizer_offload_seconds[0];
  const double step = *std::max_element(costs.optimizer_seconds.begin(), costs.optimizer_seconds.end()) - gather;
  b.optimizer_s = step - step_offload;
  b.offload_s = m * r0.offload + step_offload;
  b.dp_comm_s = static_cast<double>(sim->reduce_wait_ns[0]) * 1e-9 + gather + m * r0.dp_phase;
  const double busy = b.compute_s + b.tp_comm_s + b.cp_comm_s + b.dp_comm_s + b.ep_comm_s + m * r0.offload;
  const double idle = rank_idle_s(*sim, busy, step);
  // The first stage's bubble (schedule_metrics.h) holds the time its pipeline sends run while it
  // does no work: exposed PP communication by the timeline rule (rank_breakdown(), timeline_metrics.h,
  // as TP's, CP's, EP's and DP's above are), and what is left of it is the bubble. Its other idle
  // time faces data-parallel work: a ZeRO-3 gather its op waits for, or, after its optimizer step,
  // a later stage's gradient reduction that ends the iteration (Megatron-LM's step waits for every
  // stage in its global gradient-norm reduction): exposed DP communication, so the parts still
  // add up.
  const double stage_bubble = static_cast<double>(sim->bubble_ns[0]) * 1e-9;
  b.pp_comm_s = std::min(static_cast<double>(sim->first_rank_exposed_send_ns) * 1e-9, idle);
  b.bubble_s = std::min(std::max(stage_bubble - b.pp_comm_s, 0.0), idle - b.pp_comm_s);
  b.dp_comm_s += idle - b.bubble_s - b.pp_comm_s;
  out.bubble_fraction = sim->bubble_fraction;
  out.bubble_fraction_max = sim->bubble_fraction_max;
  out.skipped_ops = sim->skipped_ops;
  out.simulated_ops = sim->simulated_ops;
  add_volume(b, plan, costs);
  if (options.keep_timeline) out.timeline = std::move(sim->timeline);
  return out;
}

TimePrediction closed_form_time(const Plan& plan, const IterationCosts& c) {
  const double p = static_cast<double>(plan.layout.pp);
  const double v = static_cast<double>(plan.layout.vpp);
  const double m = static_cast<double>(c.micro_batches);
  closed_form::Pipeline pipeline;
  pipeline.keep_stages = true;
  for (std::int64_t r = 0; r < plan.layout.pp; ++r) pipeline.add_rank(rank_sums(plan, c, r));
  const double pipe = closed_form::pipeline_seconds(plan.layout.schedule, m, p, v, pipeline);
  const double transfers = closed_form::transfer_seconds(plan.layout.schedule, m, p, v, c.p2p_seconds, pipeline);
  // Megatron's schedules finish with chunk 0 (the last backward runs the first chunk).
  const closed_form::RankSums r0 = rank_sums(plan, c, 0);
  const double dp_exposed = closed_form::exposed_dp_seconds(
      plan.layout.dp_overlap, kDpBucketsPerChunk, v, p, r0.dp, c.chunk_dp_seconds[0],
      c.chunk_backward_input[0].total_s() + c.chunk_backward_weight[0].total_s());
  const double optimizer = *std::max_element(c.optimizer_seconds.begin(), c.optimizer_seconds.end());

  TimePrediction out;
  out.iteration_s = pipe + transfers + dp_exposed + optimizer;
  auto& b = out.breakdown;
  const double sends = closed_form::exposed_sends_seconds(plan.layout.schedule, m, p, c.p2p_seconds, r0, pipeline);
  closed_form::fill_breakdown(b, m, r0, pipe, transfers, sends, dp_exposed, optimizer, c.optimizer_dp_seconds[0],
                              c.optimizer_offload_seconds[0]);
  const closed_form::BubbleFractions bubbles = closed_form::bubble_fractions(pipe + transfers, m, pipeline);
  out.bubble_fraction = bubbles.mean;
  out.bubble_fraction_max = bubbles.max;
  add_volume(b, plan, c);
  return out;
}

}  // namespace plansight::estimator
