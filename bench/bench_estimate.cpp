// One full estimate (validation, parameters, per-stage memory, FLOPs, time and cost) of the
// default plan and of a few other layouts, timed per call. Run:
//   build/release/bench/plansight_bench_estimate --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_layers.h"
#include "bench_plans.h"

namespace {

using namespace plansight::estimator;
using plansight::bench::largest_interactive;
using plansight::bench::trillion_on_3072;

// The benchmark's loop: one estimate a call, which must simulate its time.
void time_estimates(benchmark::State& state, const Plan& plan, const EstimateOptions& options = {}) {
  for (auto _ : state) {
    auto e = estimate(plan, options);
    if (!e.ok() || !e->time.simulated) state.SkipWithError(e.ok() ? "not simulated" : e.error_text().c_str());
    benchmark::DoNotOptimize(e);
  }
}
// largest_interactive() with the schedule's chunks: 4 interleaved, 2 for DualPipe(V), else 1.
Plan largest_of(PipelineSchedule schedule) {
  const bool two_chunks = schedule == PipelineSchedule::dualpipev || schedule == PipelineSchedule::dualpipe;
  return largest_interactive(schedule, schedule == PipelineSchedule::interleaved ? 4 : two_chunks ? 2 : 1);
}

void BM_EstimateDefaultPlan(benchmark::State& state) {
  const Plan plan = default_plan();
  for (auto _ : state) {
    auto e = estimate(plan);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateDefaultPlan);

void BM_EstimateInterleavedZero1(benchmark::State& state) {
  Plan plan = default_plan();
  plan.layout.vpp = 3;
  plan.layout.pp = 8;
  plan.layout.schedule = PipelineSchedule::interleaved;
  plan.layout.sequence_parallel = true;
  plan.layout.recompute = Recompute::selective;
  plan.layout.zero_stage = 1;
  plan.model.layers = 96;
  for (auto _ : state) {
    auto e = estimate(plan);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateInterleavedZero1);

void BM_EstimateTrillionOn3072(benchmark::State& state) {
  Plan plan = trillion_on_3072();
  plan.training.global_batch = 3072;
  plan.training.achieved_tflops = 163;
  for (auto _ : state) {
    auto e = estimate(plan);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateTrillionOn3072);

// parallel: EstimateOptions::parallel_simulations (1: a long table made on two threads, as every
// caller but the search makes it; 0: on this thread alone).
void BM_EstimatePp64M1024(benchmark::State& state) {
  const Plan plan = largest_interactive(state.range(0) == 1 ? PipelineSchedule::one_f_one_b : PipelineSchedule::interleaved,
                                        state.range(0));
  EstimateOptions options;
  options.parallel_simulations = state.range(1) != 0;
  time_estimates(state, plan, options);
}
// The fastest repetition beside mean and median: on a shared 2-core VM a neighbour's burst moves
// the median by up to 2x, the minimum of 10 repetitions far less (bench/results/estimate-cpu.txt).
double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
// The 64-stage benchmarks' report: milliseconds, with the fastest repetition.
void in_ms_with_fastest(benchmark::internal::Benchmark* b) { b->ComputeStatistics("min", fastest)->Unit(benchmark::kMillisecond); }
constexpr std::int64_t arg(PipelineSchedule s) { return static_cast<std::int64_t>(s); }
using S = PipelineSchedule;

BENCHMARK(BM_EstimatePp64M1024)
    ->ArgNames({"vpp", "parallel"})
    ->ArgsProduct({{1, 4}, {1, 0}})
    ->Apply(in_ms_with_fastest);

// The same plans, each estimate on a schedule table of its own: an estimate reuses the table its
// thread made last when the schedule, stages, virtual stages and micro-batches are the same (an
// edit of anything else), so the benchmarks above time that case; here every other estimate has
// 1024 micro-batches and the rest 960, and each makes its table anew.
void BM_EstimatePp64M1024NewTable(benchmark::State& state) {
  const auto schedule = static_cast<PipelineSchedule>(state.range(0));
  Plan a = largest_of(schedule);
  a.layout.zero_stage = state.range(1) != 0 ? 3 : 1;
  a.training.zero3_prefetch = false;
  Plan b = a;
  b.training.global_batch = 960 * 6;
  state.SetLabel(std::string(to_string(schedule)) + (state.range(1) != 0 ? ", ZeRO-3" : ""));
  bool first = true;
  for (auto _ : state) {
    auto e = estimate(first ? a : b);
    first = !first;
    if (!e.ok() || !e->time.simulated) state.SkipWithError(e.ok() ? "not simulated" : e.error_text().c_str());
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimatePp64M1024NewTable)
    ->ArgNames({"schedule", "zero3"})
    ->ArgsProduct({{arg(S::one_f_one_b), arg(S::interleaved), arg(S::zb_h1), arg(S::dualpipev)}, {0, 1}})
    ->Apply(in_ms_with_fastest);

// The same size under every other schedule (GPipe, ZB-H1, and the two-chunk DualPipeV and
// DualPipe with vpp 2), so that no schedule falls outside the target.
void BM_EstimatePp64M1024Schedule(benchmark::State& state) {
  const auto schedule = static_cast<PipelineSchedule>(state.range(0));
  const Plan plan = largest_of(schedule);
  state.SetLabel(std::string(to_string(schedule)));
  EstimateOptions options;
  options.parallel_simulations = state.range(1) != 0;
  time_estimates(state, plan, options);
}
BENCHMARK(BM_EstimatePp64M1024Schedule)
    ->ArgNames({"schedule", "parallel"})
    ->ArgsProduct({{arg(S::gpipe), arg(S::zb_h1), arg(S::dualpipev), arg(S::dualpipe)}, {1, 0}})
    ->Apply(in_ms_with_fastest);

// The 64-stage plans at fewer micro-batches: the target holds for any plan up to 1024, and a
// shorter run has a shorter steady state to skip (interleaved: its period is a micro-batch group
// of 64, so 128-512 micro-batches are 2-8 periods). Interleaved runs with vpp 4, DualPipeV and
// DualPipe with 2, the others with 1.
void BM_EstimatePp64MicroBatches(benchmark::State& state) {
  const auto schedule = static_cast<PipelineSchedule>(state.range(0));
  Plan plan = largest_of(schedule);
  plan.training.global_batch = state.range(1) * 6;
  state.SetLabel(std::string(to_string(schedule)));
  time_estimates(state, plan);
}
BENCHMARK(BM_EstimatePp64MicroBatches)
    ->ArgNames({"schedule", "m"})
    ->ArgsProduct({{arg(S::one_f_one_b), arg(S::interleaved), arg(S::gpipe), arg(S::zb_h1), arg(S::dualpipev),
                    arg(S::dualpipe)},
                   {128, 192, 256, 320, 384, 512, 768}})
    ->Apply(in_ms_with_fastest);

// The 64 x 1024 plans with ZeRO-3 (FSDP), its gathers prefetched or not: each micro-batch's
// gathers and reduce-scatters are on the communication lane, and with them every rank runs its
// forwards at the first stage's pace and its backwards at its own until the two meet, a front
// moving up the ranks over hundreds of periods (bench/results/time-core-cpu.txt, twelfth section).
void BM_EstimatePp64M1024Zero3(benchmark::State& state) {
  const auto schedule = static_cast<PipelineSchedule>(state.range(0));
  Plan plan = largest_of(schedule);
  plan.layout.zero_stage = 3;
  plan.training.zero3_prefetch = state.range(1) != 0;
  state.SetLabel(std::string(to_string(schedule)) + (plan.training.zero3_prefetch ? ", prefetch" : ""));
  time_estimates(state, plan);
}
BENCHMARK(BM_EstimatePp64M1024Zero3)
    ->ArgNames({"schedule", "prefetch"})
    ->ArgsProduct({{arg(S::one_f_one_b), arg(S::interleaved), arg(S::zb_h1), arg(S::dualpipev)}, {1, 0}})
    ->Apply(in_ms_with_fastest);

// A mixture of experts at the same size: Mixtral 8x22B's layer (8 experts, top 2) on one layer
// per chunk (64 x the schedule's chunks per rank), PP 64, EP 8, 1024 micro-batches; each op's
// all-to-all dispatch and combine on the communication lane.
void BM_EstimatePp64M1024Moe(benchmark::State& state) {
  const auto schedule = static_cast<PipelineSchedule>(state.range(0));
  Plan plan = largest_of(schedule);
  const std::int64_t chunks = plan.layout.vpp;
  plan.model = *find_model("mixtral-8x22b");
  plan.model.layers = 64 * chunks;
  plan.layout.tp = 1;
  plan.layout.ep = 8;
  plan.cluster.gpus = 64 * 8;
  plan.training.global_batch = 1024 * 8;  // dp 8
  state.SetLabel(std::string(to_string(schedule)));
  time_estimates(state, plan);
}
BENCHMARK(BM_EstimatePp64M1024Moe)
    ->ArgNames({"schedule"})
    ->ArgsProduct({{arg(S::one_f_one_b), arg(S::interleaved), arg(S::zb_h1), arg(S::dualpipev)}})
    ->Apply(in_ms_with_fastest);

// The largest 64-stage plans whose ranks share processors (cluster.shared_processors 8): ranks
// that share processors advance together in time order with their timeline, bounded by
// kMaxTimelineOps (time_model.cpp), so these are the slowest estimates the bound lets through.
void BM_EstimateSharedProcessorsAtTheLimit(benchmark::State& state) {
  const auto schedule = static_cast<PipelineSchedule>(state.range(0));
  Plan plan = largest_of(schedule);
  plan.cluster.shared_processors = 8;
  const std::int64_t per_micro_batch = schedule_ops(plan) / plan.micro_batches();
  std::int64_t m = kMaxTimelineOps / per_micro_batch;
  if (schedule == PipelineSchedule::interleaved) m -= m % plan.layout.pp;
  plan.training.global_batch = m * 6;
  state.SetLabel(std::string(to_string(schedule)) + ", " + std::to_string(schedule_ops(plan)) + " ops");
  time_estimates(state, plan);
}
BENCHMARK(BM_EstimateSharedProcessorsAtTheLimit)
    ->ArgNames({"schedule"})
    ->ArgsProduct({{arg(S::one_f_one_b), arg(S::interleaved), arg(S::zb_h1)}})
    ->Unit(benchmark::kMillisecond);

// The Timeline page's "Per layer" view of the default plan (GPT-3 175B, PP 8 x 96 micro-batches,
// 12 layers per stage): the predicted timeline laid out layer by layer, about 113,000 spans.
void BM_LayerTimelineDefaultPlan(benchmark::State& state) {
  const Plan plan = default_plan();
  TimePrediction predicted;
  EstimateOptions options;
  options.prediction = &predicted;
  const auto e = estimate(plan, options);
  if (!e.ok()) {
    state.SkipWithError(e.error_text().c_str());
    return;
  }
  std::size_t spans = 0;
  for (auto _ : state) {
    auto layered = layer_timeline(plan, e->padded_vocab, predicted.timeline);
    if (!layered.ok()) state.SkipWithError(layered.error_text().c_str());
    spans = 0;
    for (const auto& t : layered->timeline.tracks) spans += t.spans.size();
    benchmark::DoNotOptimize(layered);
  }
  state.counters["spans"] = static_cast<double>(spans);
}
BENCHMARK(BM_LayerTimelineDefaultPlan)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
