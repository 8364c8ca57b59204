// Simulation of one pipeline iteration (schedule table -> predicted Timeline + bubble metric),
// timed per call for the sizes the layout search and the GUI ask for. Run:
//   build/release/bench/plansight_bench_pipeline_simulator --benchmark_min_time=1
// BM_MakeSparseTable: making the sparse table a 64-stage estimate simulates.
// Arguments: p, v, m, keep (1: build the Timeline, spans and names, as for a drawn timeline;
// 0: times only, as the time model's breakdown and the search's re-ranking ask, which skips the
// steady state's repeating periods: the counter "skipped"). Each simulated op has F, B and W
// compute, p2p sends, DP buckets, optimizer; items per second count every op of the schedule.
#include <benchmark/benchmark.h>

#include <string>

#include "plansight/estimator/pipeline_simulator.h"
#include "schedule_rows.h"  // make_simulation_table (private to the estimator: bench only)

namespace {

using namespace plansight::estimator;

SimulationInput input() {
  ChunkCost c;
  c.forward = compute_cost(1e-3);
  c.backward = compute_cost(2e-3);
  c.weight_grad = compute_cost(1e-3);
  c.send_activation_seconds = c.send_gradient_seconds = 1e-5;
  c.dp_reduce_seconds = 5e-3;
  SimulationInput in;
  in.chunks = {c};
  in.optimizer_seconds = 1e-3;
  in.dp_buckets = 4;
  return in;
}

void simulate_schedule(benchmark::State& state, PipelineSchedule kind) {
  const auto table = make_schedule(kind, state.range(0), state.range(1), state.range(2));
  if (!table.ok()) {
    state.SkipWithError(table.error_text().c_str());
    return;
  }
  SimulationInput in = input();
  in.keep_timeline = state.range(3) != 0;
  std::size_t ops = 0;
  for (const auto& r : table->ranks) ops += r.size();
  std::int64_t skipped = 0;
  for (auto _ : state) {
    auto result = simulate(*table, in);
    skipped = result.ok() ? result->skipped_ops : 0;
    benchmark::DoNotOptimize(result);
  }
  state.counters["ops"] = static_cast<double>(ops);
  // Ops of the steady state not simulated one by one (SimulationResult::skipped_ops).
  state.counters["skipped"] = static_cast<double>(skipped);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(ops));
}

void BM_Simulate1F1B(benchmark::State& s) { simulate_schedule(s, PipelineSchedule::one_f_one_b); }
void BM_SimulateZbH1(benchmark::State& s) { simulate_schedule(s, PipelineSchedule::zb_h1); }
void BM_SimulateInterleaved(benchmark::State& s) {
  simulate_schedule(s, PipelineSchedule::interleaved);
}

BENCHMARK(BM_Simulate1F1B)
    ->ArgNames({"p", "v", "m", "keep"})
    ->ArgsProduct({{8}, {1}, {32}, {0, 1}})
    ->ArgsProduct({{64}, {1}, {64, 1024}, {0, 1}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateZbH1)->ArgNames({"p", "v", "m", "keep"})->ArgsProduct({{8, 64}, {1}, {64}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateInterleaved)
    ->ArgNames({"p", "v", "m", "keep"})
    ->ArgsProduct({{8}, {4}, {32}, {0, 1}})
    ->ArgsProduct({{64}, {4}, {64, 1024}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

void BM_MakeSchedule(benchmark::State& state) {
  for (auto _ : state) {
    auto t = make_schedule(PipelineSchedule::interleaved, 64, 4, 64);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_MakeSchedule)->Unit(benchmark::kMicrosecond);

// The sparse table an estimate without a timeline simulates (schedule_rows.h), made on one thread
// as each of predict_time's two runs makes its own, alternating 1,024 and 960 micro-batches so
// that every table is new (as after an edit of the batch; an edit that keeps the table's size
// reuses it, time_model.cpp). The part of a new 64-stage estimate that comes before its runs.
void BM_MakeSparseTable(benchmark::State& state) {
  const auto kind = static_cast<PipelineSchedule>(state.range(0));
  const std::int64_t v = state.range(1);
  ScheduleOptions one_thread;
  one_thread.two_threads = false;
  bool first = true;
  for (auto _ : state) {
    auto t = make_simulation_table(kind, 64, v, first ? 1024 : 960, one_thread, true);
    first = !first;
    if (!t.ok()) state.SkipWithError(t.error_text().c_str());
    benchmark::DoNotOptimize(t);
  }
  state.SetLabel(std::string(to_string(kind)));
}
BENCHMARK(BM_MakeSparseTable)
    ->ArgNames({"schedule", "v"})
    ->Args({static_cast<std::int64_t>(PipelineSchedule::one_f_one_b), 1})
    ->Args({static_cast<std::int64_t>(PipelineSchedule::interleaved), 4})
    ->Args({static_cast<std::int64_t>(PipelineSchedule::zb_h1), 1})
    ->Args({static_cast<std::int64_t>(PipelineSchedule::dualpipev), 2})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
