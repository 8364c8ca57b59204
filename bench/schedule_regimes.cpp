// How far each 64-stage schedule of BM_EstimatePp64M1024Schedule is from a steady state the
// simulator can skip: the ops it simulates one by one, and how the op start times of the full
// simulation (timeline kept) break into arithmetic runs. For every rank and every (phase, chunk)
// sequence of ops, a breakpoint is a micro-batch where the step between consecutive starts
// changes. A skip that moves the whole state at once (the periodic skip, or any affine one) can
// only jump between the micro-batches where some rank has a breakpoint; a rank's own runs are
// what a per-rank, piecewise-linear engine could jump over. Run:
//   build/dev/bench/plansight_schedule_regimes
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "bench_plans.h"

namespace {

using namespace plansight::estimator;
using plansight::bench::largest_interactive;  // the plans of BM_EstimatePp64M1024Schedule

// The ops the estimate's simulation of `plan` runs one by one (no timeline: it skips what
// repeats); -1 when the plan is refused.
std::int64_t simulated_ops(const Plan& plan) {
  const auto e = estimate(plan);
  if (!e.ok()) return -1;
  TimeModelOptions no_timeline;
  no_timeline.keep_timeline = false;
  const auto t = predict_time(plan, e->padded_vocab, no_timeline);
  return t.ok() ? t->simulated_ops : -1;
}

struct RankRuns {
  int breakpoints = 0;
  std::set<std::int32_t> at;  // micro-batches with a breakpoint
};

// A rank's breakpoints over its compute spans: each op's start is its earliest span's (a
// backward's recomputation comes first), keyed by (op kind, chunk, micro-batch). The step is
// taken `shift` micro-batches back, the period's (steady_state.h: Megatron's interleaved order
// repeats a micro-batch group on, 1 micro-batch for the others), so a steady state has none.
RankRuns runs_of(const Track& track, std::size_t shift) {
  std::map<std::tuple<int, int, int>, std::int64_t> start;
  for (const Span& s : track.spans) {
    if (s.micro_batch < 0) continue;
    const int kind = s.phase == Phase::recompute ? static_cast<int>(Phase::backward) : static_cast<int>(s.phase);
    const auto key = std::make_tuple(kind, s.stage, s.micro_batch);
    auto [it, fresh] = start.try_emplace(key, s.start_ns);
    if (!fresh) it->second = std::min(it->second, s.start_ns);
  }
  std::map<std::pair<int, int>, std::vector<std::pair<int, std::int64_t>>> sequences;
  for (const auto& [key, t] : start) sequences[{std::get<0>(key), std::get<1>(key)}].push_back({std::get<2>(key), t});
  RankRuns out;
  for (const auto& [key, seq] : sequences) {
    const auto step = [&](std::size_t i) { return seq[i].second - seq[i - shift].second; };
    for (std::size_t i = shift + 1; i < seq.size(); ++i) {
      if (step(i) != step(i - 1)) {
        ++out.breakpoints;
        out.at.insert(seq[i].first);
      }
    }
  }
  return out;
}

}  // namespace

int main() {
  std::printf("%-12s %9s %11s %17s %14s %15s\n", "schedule", "ops", "simulated", "breakpoints/rank",
              "changes (mb)", "longest (per.)");
  const std::pair<PipelineSchedule, std::int64_t> schedules[] = {
      {PipelineSchedule::one_f_one_b, 1}, {PipelineSchedule::interleaved, 4}, {PipelineSchedule::gpipe, 1},
      {PipelineSchedule::zb_h1, 1},       {PipelineSchedule::dualpipev, 2},   {PipelineSchedule::dualpipe, 2}};
  for (const auto& [schedule, vpp] : schedules) {
    const Plan plan = largest_interactive(schedule, vpp);
    const auto e = estimate(plan);
    if (!e.ok()) {
      std::printf("%s: %s\n", std::string(to_string(schedule)).c_str(), e.error_text().c_str());
      return 1;
    }
    // The estimate's simulation (no timeline: it skips what repeats), then the full one.
    TimeModelOptions no_timeline;
    no_timeline.keep_timeline = false;
    const auto lean = predict_time(plan, e->padded_vocab, no_timeline);
    TimeModelOptions kept;
    kept.keep_timeline = true;
    const auto full = predict_time(plan, e->padded_vocab, kept);
    if (!lean.ok() || !full.ok()) return 1;
    const std::int64_t ops = schedule_ops(plan);
    const std::int64_t simulated = lean->simulated_ops;
    const bool interleaved = schedule == PipelineSchedule::interleaved;
    const double micro_batches = static_cast<double>(plan.micro_batches()) / (schedule == PipelineSchedule::dualpipe ? 2.0 : 1.0);
    std::vector<int> per_rank;
    std::set<std::int32_t> changes;
    for (const Track& track : full->timeline.tracks) {
      if (track.lane != Lane::compute) continue;
      const RankRuns r = runs_of(track, interleaved ? static_cast<std::size_t>(plan.layout.pp) : 1);
      per_rank.push_back(r.breakpoints);
      // DualPipe's second pipeline runs micro-batches m/2 .. m-1 in step with the first's 0 .. m/2-1.
      for (const std::int32_t mb : r.at) changes.insert(mb % static_cast<std::int32_t>(micro_batches));
    }
    std::sort(per_rank.begin(), per_rank.end());
    // One period moves each sequence one micro-batch on (DualPipe: each of its two pipelines'),
    // except interleaved, whose period is a micro-batch group (p micro-batches).
    const double per_period = interleaved ? static_cast<double>(plan.layout.pp) : 1.0;
    char breakpoints[48];
    std::snprintf(breakpoints, sizeof breakpoints, "%d / %d / %d", per_rank.front(), per_rank[per_rank.size() / 2],
                  per_rank.back());
    // The longest stretch of micro-batches with no breakpoint on any rank: the most one skip of
    // the whole state could move over.
    std::int32_t longest = 0, last = 0;
    for (const std::int32_t mb : changes) longest = std::max(longest, mb - std::exchange(last, mb));
    longest = std::max(longest, static_cast<std::int32_t>(micro_batches) - last);
    std::printf("%-12s %9lld %10.0f%% %17s %14zu %14.1f\n", std::string(to_string(schedule)).c_str(),
                static_cast<long long>(ops), 100.0 * static_cast<double>(simulated) / static_cast<double>(ops), breakpoints,
                changes.size(), static_cast<double>(longest) / per_period);
  }
  std::printf("simulated: ops the estimate's simulation runs one by one; breakpoints/rank: min / median / max over\n"
              "the 64 ranks; changes: micro-batches where any rank has one; longest: the longest stretch without\n"
              "one, in periods\n\n");

  // With ZeRO-3 each micro-batch's gathers and reduce-scatters are on the communication lane; a
  // rank then runs its forwards at the first stage's pace and its backwards at its own until the
  // two meet, which a skip of whole periods (or of each rank's) does not cover.
  std::printf("with ZeRO-3, ops simulated one by one (gathers prefetched / not)\n");
  for (const auto& [schedule, vpp] : schedules) {
    std::printf("  %-12s", std::string(to_string(schedule)).c_str());
    for (const bool prefetch : {true, false}) {
      Plan plan = largest_interactive(schedule, vpp);
      plan.layout.zero_stage = 3;
      plan.training.zero3_prefetch = prefetch;
      const std::int64_t simulated = simulated_ops(plan);
      if (simulated < 0) return 1;
      std::printf(" %5.0f%%", 100.0 * static_cast<double>(simulated) / static_cast<double>(schedule_ops(plan)));
    }
    std::printf("\n");
  }
  std::printf("\n");

  // Interleaved layouts of Narayanan's 1 T model (768 layers, TP 8, DP 2): the ops each
  // estimate simulates one by one, for 8 and 16 micro-batch groups.
  std::printf("interleaved, ops simulated one by one / all ops\n");
  std::int64_t total = 0;
  for (const std::int64_t p : {4, 8, 16, 32, 64}) {
    for (const std::int64_t v : {2, 3, 4}) {
      for (const std::int64_t groups : {8, 16}) {
        Plan plan = largest_interactive(PipelineSchedule::interleaved, v);
        plan.model.layers = 768;
        plan.layout.pp = p;
        plan.cluster.gpus = 8 * p * 2;
        plan.training.global_batch = 2 * groups * p;
        const std::int64_t ops = schedule_ops(plan), simulated = simulated_ops(plan);
        if (simulated < 0) return 1;
        total += simulated;
        std::printf("  p %2lld v %lld m %4lld: %7lld / %7lld\n", static_cast<long long>(p), static_cast<long long>(v),
                    static_cast<long long>(groups * p), static_cast<long long>(simulated), static_cast<long long>(ops));
      }
    }
  }
  std::printf("  total simulated %lld\n", static_cast<long long>(total));
  return 0;
}
