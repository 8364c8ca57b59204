// Layout search throughput: layouts per second through the closed form on 1 thread and on all
// cores (enumerated, evaluated = memory costed, fitting = memory and time costed), and the full
// search (re-ranking by simulation included) of the 1T GPT on 3072 A100s of Selene. Run:
//   build/release/bench/plansight_bench_layout_search --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <thread>

#include "plansight/estimator/layout_search.h"
#include "plansight/estimator/presets.h"

namespace {

using namespace plansight::estimator;

Plan base(const char* model, const char* system, std::int64_t gpus, std::int64_t global_batch) {
  Plan p = default_plan();
  p.model = *find_model(model);
  p.cluster = find_system(system)->cluster;
  p.cluster.gpus = gpus;
  p.layout = LayoutSpec{};
  p.training.global_batch = global_batch;
  p.training.achieved_tflops = 0;
  p.training.mfu = 0;
  return p;
}

unsigned all_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// Closed form only: one layout returned and simulated, so the rate is the enumeration's.
void closed_form_rate(benchmark::State& state, const Plan& plan) {
  SearchOptions options;
  options.threads = state.range(0) == 0 ? all_cores() : static_cast<unsigned>(state.range(0));
  options.top = 1;
  options.simulate = 1;
  double seconds = 0, enumerated = 0, evaluated = 0, fitting = 0;
  for (auto _ : state) {
    auto r = search_layouts(plan, options);
    if (!r)
      state.SkipWithError(r.error_text().c_str());
    else {
      seconds += r->closed_form_seconds;
      enumerated += static_cast<double>(r->enumerated);
      evaluated += static_cast<double>(r->evaluated);
      fitting += static_cast<double>(r->fitting);
    }
  }
  state.counters["threads"] = options.threads;
  state.counters["enumerated_per_s"] = enumerated / seconds;
  state.counters["evaluated_per_s"] = evaluated / seconds;
  state.counters["fitting_per_s"] = fitting / seconds;
  state.counters["evaluated_per_s_per_thread"] = evaluated / seconds / options.threads;
}

void BM_ClosedFormGpt3On1024(benchmark::State& state) {
  closed_form_rate(state, base("gpt3-175b", "selene", 1024, 1536));
}
BENCHMARK(BM_ClosedFormGpt3On1024)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->ArgName("threads(0=all)");

void BM_ClosedFormTrillionOn3072(benchmark::State& state) {
  closed_form_rate(state, base("narayanan-1008b", "selene", 3072, 3072));
}
BENCHMARK(BM_ClosedFormTrillionOn3072)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->ArgName("threads(0=all)");

// A space where most candidates pass the integer checks: 8 GPUs, micro-batches up to 64.
void BM_ClosedFormLlama8bOn8(benchmark::State& state) {
  closed_form_rate(state, base("llama-3.1-8b", "dgx-h100", 8, 512));
}
BENCHMARK(BM_ClosedFormLlama8bOn8)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->ArgName("threads(0=all)");

// The target: the whole search for the 1T model on 3072 A100s in under a second,
// with the default options (top 5, the best 15 re-ranked by simulation), on all cores.
void BM_FullSearchTrillionOn3072(benchmark::State& state) {
  const Plan plan = base("narayanan-1008b", "selene", 3072, 3072);
  SearchOptions options;
  options.threads = all_cores();
  for (auto _ : state) {
    auto r = search_layouts(plan, options);
    if (!r) state.SkipWithError(r.error_text().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.counters["threads"] = options.threads;
}
BENCHMARK(BM_FullSearchTrillionOn3072)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
