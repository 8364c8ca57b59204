// One full estimate (validation, parameters, per-stage memory, FLOPs, time and cost) of the
// default plan and of a few other layouts, timed per call. Run:
//   build/release/bench/plansight_bench_estimate --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"

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

void BM_EstimateTrillionOn3072(benchmark::State& state) {
  Plan plan = default_plan();
  plan.model = *find_model("narayanan-1008b");
  plan.cluster.gpus = 3072;
  plan.layout.pp = 64;
  plan.training.global_batch = 3072;
  plan.training.achieved_tflops = 163;
  for (auto _ : state) {
    auto e = estimate(plan);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateTrillionOn3072);

}  // namespace

BENCHMARK_MAIN();
