// One full estimate (validation, parameters, per-stage memory, FLOPs, time and cost) of the
// default plan and of a few other layouts, timed per call. Run:
//   build/release/bench/plansight_bench_estimate --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_layers.h"

namespace {

using namespace plansight::estimator;

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

// Narayanan et al.'s 1 T model on 3072 GPUs with 64 pipeline stages.
Plan trillion_on_3072() {
  Plan plan = default_plan();
  plan.model = *find_model("narayanan-1008b");
  plan.cluster.gpus = 3072;
  plan.layout.pp = 64;
  return plan;
}

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

// The largest plan an edit should answer interactively (issue target: <= 2 ms): 64 pipeline
// stages, 1024 micro-batches, predicted (no throughput given), as 1F1B and as interleaved with 4
// virtual stages; the 1 T model of Narayanan et al. with 256 layers so that 64 x 4 chunks divide.
Plan largest_interactive(PipelineSchedule schedule, std::int64_t vpp) {
  Plan plan = trillion_on_3072();
  plan.model.layers = 256;
  plan.layout.tp = 8;
  plan.layout.vpp = vpp;
  plan.layout.schedule = schedule;
  plan.training.micro_batch = 1;
  plan.training.global_batch = 1024 * 6;  // dp = 3072 / (8 x 64) = 6: 1024 micro-batches
  return plan;
}

// parallel: EstimateOptions::parallel_simulations (1: the free-transfer simulation on the side
// thread, as every caller but the search runs it; 0: both on this thread).
void BM_EstimatePp64M1024(benchmark::State& state) {
  const Plan plan = largest_interactive(state.range(0) == 1 ? PipelineSchedule::one_f_one_b : PipelineSchedule::interleaved,
                                        state.range(0));
  EstimateOptions options;
  options.parallel_simulations = state.range(1) != 0;
  for (auto _ : state) {
    auto e = estimate(plan, options);
    if (!e.ok() || !e->time.simulated) state.SkipWithError(e.ok() ? "not simulated" : e.error_text().c_str());
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimatePp64M1024)
    ->ArgNames({"vpp", "parallel"})
    ->ArgsProduct({{1, 4}, {1, 0}})
    ->Unit(benchmark::kMillisecond);

// The same size under every other schedule (GPipe, ZB-H1, and the two-chunk DualPipeV and
// DualPipe with vpp 2), so that no schedule falls outside the target.
void BM_EstimatePp64M1024Schedule(benchmark::State& state) {
  const auto schedule = static_cast<PipelineSchedule>(state.range(0));
  const bool two_chunks = schedule == PipelineSchedule::dualpipev || schedule == PipelineSchedule::dualpipe;
  const Plan plan = largest_interactive(schedule, two_chunks ? 2 : 1);
  state.SetLabel(std::string(to_string(schedule)));
  EstimateOptions options;
  options.parallel_simulations = state.range(1) != 0;
  for (auto _ : state) {
    auto e = estimate(plan, options);
    if (!e.ok() || !e->time.simulated) state.SkipWithError(e.ok() ? "not simulated" : e.error_text().c_str());
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimatePp64M1024Schedule)
    ->ArgNames({"schedule", "parallel"})
    ->ArgsProduct({{static_cast<int>(PipelineSchedule::gpipe), static_cast<int>(PipelineSchedule::zb_h1),
                    static_cast<int>(PipelineSchedule::dualpipev), static_cast<int>(PipelineSchedule::dualpipe)},
                   {1, 0}})
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
