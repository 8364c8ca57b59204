// The layout search: its lean closed form equals the library's estimate_memory() and
// closed_form_time(iteration_costs()) on a table of plans; its integer checks agree with
// validate() on a brute-forced space; every returned layout is valid, fits and is ranked;
// counts add up; thread count changes nothing; and impossible requests name the reason.
#include "plansight/estimator/layout_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/search_constraints.h"
#include "plansight/estimator/time_model.h"

namespace plansight::estimator {
namespace {

Plan base_plan(const char* model, const char* system, std::int64_t gpus, std::int64_t global_batch) {
  Plan p = default_plan();
  p.model = *find_model(model);
  const SystemPreset s = *find_system(system);
  p.cluster = s.cluster;
  p.cluster.gpus = gpus;
  p.layout = LayoutSpec{};
  p.training.global_batch = global_batch;
  p.training.achieved_tflops = 0;
  p.training.mfu = 0;
  return p;
}

void expect_relative(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), 1e-9 * std::max(std::fabs(want), 1e-30)) << what << ": " << got << " vs " << want;
}

TEST(LayoutSearch, LeanClosedFormEqualsTheLibrary) {
  struct Row {
    const char* model;
    std::int64_t gpus, tp, pp, vpp, cp, mb, global, zero;
    Recompute recompute;
    PipelineSchedule schedule;
    bool sp, flash, overlap;
  };
  using R = Recompute;
  using S = PipelineSchedule;
  const Row rows[] = {
      {"gpt3-175b", 1024, 8, 8, 1, 1, 1, 1536, 0, R::full, S::one_f_one_b, false, true, true},
      {"gpt3-175b", 1024, 8, 8, 3, 1, 1, 1536, 1, R::selective, S::interleaved, true, true, true},
      {"gpt3-175b", 1024, 8, 16, 2, 1, 1, 1536, 1, R::selective, S::interleaved, true, false, true},
      {"gpt3-175b", 512, 4, 16, 1, 2, 2, 512, 2, R::none, S::zb_h1, true, true, false},
      {"gpt3-175b", 256, 8, 4, 1, 1, 1, 256, 3, R::full, S::gpipe, false, false, true},
      {"gpt3-1.3b", 8, 1, 1, 1, 1, 4, 256, 0, R::none, S::one_f_one_b, false, true, true},
      {"gpt3-1.3b", 8, 2, 2, 1, 2, 1, 64, 3, R::selective, S::one_f_one_b, true, true, true},
      {"gpt3-1.3b", 16, 1, 2, 1, 1, 2, 64, 1, R::full, S::gpipe, false, false, false},
      {"llama-2-7b", 64, 2, 4, 2, 1, 1, 256, 1, R::none, S::interleaved, true, true, true},
      {"llama-2-7b", 64, 8, 8, 1, 1, 1, 4, 0, R::selective, S::one_f_one_b, true, true, true},  // m < p
      {"llama-3.1-70b", 512, 8, 8, 5, 2, 1, 1024, 1, R::full, S::interleaved, true, true, true},
      {"narayanan-1008b", 3072, 8, 64, 1, 1, 1, 3072, 0, R::full, S::one_f_one_b, false, false, true},
  };
  // The same layouts in fp8 on H100s (Transformer Engine's fp8 weight copies and saved inputs).
  const Row fp8_rows[] = {
      {"gpt3-175b", 1024, 8, 8, 3, 1, 1, 1536, 1, R::selective, S::interleaved, true, true, true},
      {"llama-2-7b", 64, 2, 4, 2, 1, 1, 256, 1, R::none, S::interleaved, true, true, true},
      {"gpt3-1.3b", 8, 2, 2, 1, 2, 1, 64, 3, R::selective, S::one_f_one_b, true, true, true},
  };
  std::vector<std::tuple<Row, bool, bool>> all;  // row, fp8, TP communication overlapped
  for (const auto& row : rows) all.emplace_back(row, false, false);
  for (const auto& row : fp8_rows) all.emplace_back(row, true, false);
  // Megatron-Core's --tp-comm-overlap on sequence-parallel rows, bf16 and fp8.
  all.emplace_back(rows[1], false, true);
  all.emplace_back(rows[10], false, true);
  all.emplace_back(fp8_rows[0], true, true);
  for (const auto& [row, fp8, tp_overlap] : all) {
    Plan plan = base_plan(row.model, fp8 ? "dgx-h100" : "selene", row.gpus, row.global);
    if (fp8) {
      plan.training.precision = Precision::fp8;
      plan.training.grad_precision = gradient_precision_for(Precision::fp8);
    }
    plan.layout.tp = row.tp;
    plan.layout.pp = row.pp;
    plan.layout.vpp = row.vpp;
    plan.layout.cp = row.cp;
    plan.layout.zero_stage = row.zero;
    plan.layout.recompute = row.recompute;
    plan.layout.schedule = row.schedule;
    plan.layout.sequence_parallel = row.sp;
    plan.layout.tp_overlap = tp_overlap;
    plan.layout.dp_overlap = row.overlap;
    plan.training.micro_batch = row.mb;
    plan.training.attention = row.flash ? AttentionKernel::flash : AttentionKernel::standard;
    const auto problems = validate(plan);
    ASSERT_FALSE(has_errors(problems)) << row.model << ": " << join_messages(problems);
    const std::string name = std::string(fp8 ? "fp8 " : "") + (tp_overlap ? "tp-overlap " : "") + row.model + " tp " + std::to_string(row.tp) + " pp " +
                             std::to_string(row.pp) + " v " + std::to_string(row.vpp) + " " +
                             std::string(to_string(row.schedule));

    const std::int64_t vocab = padded_vocab(plan.model.vocab, plan.layout.tp);
    const DeviceEfficiency eff = default_efficiency(plan.cluster.gpu);
    const DeviceModel device(plan.cluster.gpu, plan.training.precision, eff);
    const auto want =
        closed_form_time(plan, iteration_costs(plan, device, plan_links(plan, device.efficiency()), vocab));
    const auto want_memory = estimate_memory(plan, vocab);
    const ClosedFormFigures got = search_closed_form(plan);

    expect_relative(got.iteration_s, want.iteration_s, name + " iteration");
    expect_relative(got.breakdown.compute_s, want.breakdown.compute_s, name + " compute");
    expect_relative(got.breakdown.tp_comm_s + 1, want.breakdown.tp_comm_s + 1, name + " tp");
    expect_relative(got.breakdown.cp_comm_s + 1, want.breakdown.cp_comm_s + 1, name + " cp");
    expect_relative(got.breakdown.pp_comm_s + 1, want.breakdown.pp_comm_s + 1, name + " pp");
    expect_relative(got.breakdown.dp_comm_s + 1, want.breakdown.dp_comm_s + 1, name + " dp");
    expect_relative(got.breakdown.bubble_s + 1, want.breakdown.bubble_s + 1, name + " bubble");
    expect_relative(got.breakdown.optimizer_s, want.breakdown.optimizer_s, name + " optimizer");
    expect_relative(got.peak.total_bytes(), want_memory.peak.total_bytes(), name + " memory");
    expect_relative(got.peak.activations_bytes, want_memory.peak.activations_bytes, name + " activations");
    expect_relative(got.peak.buffers_bytes + 1, want_memory.peak.buffers_bytes + 1, name + " buffers");
    EXPECT_EQ(got.most_loaded_stage, want_memory.most_loaded_stage) << name;
    EXPECT_EQ(got.fits, want_memory.fits) << name;
  }
}

// The search's integer checks and memory test are validate() and estimate_memory(): brute force
// the same space through the library and compare the counts.
TEST(LayoutSearch, CountsAgreeWithValidateOnABruteForcedSpace) {
  Plan base = base_plan("gpt3-350m", "dgx-a100-40gb", 8, 48);
  base.cluster.gpu.memory_bytes = std::int64_t{6} << 30;  // tight, so memory rejects some
  SearchOptions options;
  options.space.micro_batch = {1, 2, 4};
  options.top = 3;
  auto result = search_layouts(base, options);
  ASSERT_TRUE(result.ok()) << result.error_text();

  std::int64_t enumerated = 0, invalid = 0, too_big = 0, fitting = 0;
  for (std::int64_t tp : {1, 2, 4, 8})
    for (std::int64_t cp : {1, 2, 4, 8})
      for (std::int64_t pp : {1, 2, 4, 8}) {
        if (tp * cp * pp > 8) continue;
        std::vector<std::pair<PipelineSchedule, std::int64_t>> schedules = {{PipelineSchedule::one_f_one_b, 1}};
        if (pp > 1) {
          schedules = {{PipelineSchedule::one_f_one_b, 1}, {PipelineSchedule::gpipe, 1}, {PipelineSchedule::zb_h1, 1}};
          for (std::int64_t v = 2; v <= base.model.layers; ++v)
            if (base.model.layers % v == 0) schedules.push_back({PipelineSchedule::interleaved, v});
        }
        for (std::int64_t mb : {1, 2, 4})
          for (auto [schedule, v] : schedules)
            for (bool sp : {false, true}) {
              if (sp && tp == 1) continue;
              for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full})
                for (std::int64_t zero = 0; zero < 4; ++zero) {
                  ++enumerated;
                  const Candidate c{tp, pp, v, 8 / (tp * cp * pp), cp, mb, zero, rc, schedule, sp};
                  const Plan plan = apply_candidate(base, c);
                  // Framework rules (on by default) are validate()'s warnings on cp and zero_stage.
                  const auto diagnostics = validate(plan);
                  const bool rule = std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) {
                    return d.field == "layout.cp" || d.field == "layout.zero_stage";
                  });
                  if (has_errors(diagnostics) || rule) {
                    ++invalid;
                    continue;
                  }
                  if (!estimate_memory(plan, padded_vocab(plan.model.vocab, tp)).fits)
                    ++too_big;
                  else
                    ++fitting;
                }
            }
      }
  EXPECT_EQ(result->enumerated, enumerated);
  EXPECT_EQ(result->fitting, fitting);
  std::int64_t rejected = 0, memory = 0;
  for (const auto& r : result->rejections) {
    rejected += r.count;
    if (r.reason == RejectReason::memory) memory = r.count;
  }
  EXPECT_EQ(rejected + result->fitting, result->enumerated) << "every candidate is either kept or rejected once";
  EXPECT_EQ(memory, too_big);
  EXPECT_EQ(rejected - memory, invalid);
  EXPECT_GT(too_big, 0);
  EXPECT_GT(invalid, 0);
}

TEST(LayoutSearch, ReturnedLayoutsAreValidFitAndRanked) {
  const Plan base = base_plan("gpt3-175b", "selene", 1024, 1536);
  SearchOptions options;
  options.top = 6;
  auto result = search_layouts(base, options);
  ASSERT_TRUE(result.ok()) << result.error_text();
  ASSERT_EQ(result->layouts.size(), 6u);
  std::int64_t rejected = 0;
  for (const auto& r : result->rejections) rejected += r.count;
  EXPECT_EQ(rejected + result->fitting, result->enumerated);
  EXPECT_GE(result->evaluated, result->fitting);
  const double best = result->layouts.front().estimate.time.tokens_per_s;
  for (const auto& l : result->layouts) {
    const auto problems = validate(l.plan);
    EXPECT_FALSE(has_errors(problems)) << describe(l.candidate) << ": " << join_messages(problems);
    EXPECT_TRUE(l.estimate.memory.fits) << describe(l.candidate);
    EXPECT_TRUE(l.estimate.time.predicted);
    // Throughputs within 0.01% tie (then less memory ranks first); otherwise faster is first.
    EXPECT_GE(best * (1 + 1e-4), l.estimate.time.tokens_per_s);
    EXPECT_GT(l.estimate.time.mfu, 0.2) << "a ranked layout of 175B on A100s runs at a plausible MFU";
    EXPECT_LT(l.estimate.time.mfu, 0.7);
    // The closed form ranked it; the simulation it is re-ranked by stays close (0.90-1.01 seen
    // over the top 30 of four searches: the closed form under-counts exposed p2p and ZeRO-3 traffic).
    EXPECT_NEAR(l.closed_form_iteration_s / l.estimate.time.iteration_s, 1.0, 0.15) << describe(l.candidate);
    const ClosedFormFigures again = search_closed_form(l.plan);
    EXPECT_DOUBLE_EQ(again.iteration_s, l.closed_form_iteration_s) << "ranked by the figure search_closed_form gives";
  }
  for (std::size_t i = 1; i < result->layouts.size(); ++i) {
    const auto& a = result->layouts[i - 1].estimate;
    const auto& b = result->layouts[i].estimate;
    if (a.time.tokens_per_s < b.time.tokens_per_s) {
      EXPECT_GE(a.time.tokens_per_s * (1 + 1e-4), b.time.tokens_per_s) << "only a tie may rank a slower layout first";
      EXPECT_LT(a.memory.peak.total_bytes(), b.memory.peak.total_bytes()) << "and only for less memory";
    }
  }
}

TEST(LayoutSearch, ReRankedLayoutsOverTheSimulationBoundKeepTheClosedForm) {
  const Plan base = base_plan("gpt3-175b", "selene", 1024, 1536);
  SearchOptions options;
  options.top = 6;
  auto simulated = search_layouts(base, options);
  ASSERT_TRUE(simulated.ok()) << simulated.error_text();
  EXPECT_EQ(simulated->simulated, options.top * options.simulate) << "every re-ranked layout is short enough";
  options.max_simulated_ops = 1;  // nothing may be simulated
  auto closed = search_layouts(base, options);
  ASSERT_TRUE(closed.ok()) << closed.error_text();
  EXPECT_EQ(closed->simulated, 0u);
  ASSERT_FALSE(closed->layouts.empty());
  for (const auto& l : closed->layouts) {
    EXPECT_FALSE(l.estimate.time.simulated) << describe(l.candidate);
    EXPECT_DOUBLE_EQ(l.estimate.time.iteration_s, l.closed_form_iteration_s) << describe(l.candidate);
  }
}

TEST(LayoutSearch, ThreadCountDoesNotChangeTheResult) {
  const Plan base = base_plan("llama-2-13b", "dgx-h100", 64, 512);
  SearchOptions one;
  one.threads = 1;
  one.top = 8;
  SearchOptions three = one;
  three.threads = 3;
  auto a = search_layouts(base, one);
  auto b = search_layouts(base, three);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->threads, 3u);
  EXPECT_EQ(a->enumerated, b->enumerated);
  EXPECT_EQ(a->evaluated, b->evaluated);
  EXPECT_EQ(a->fitting, b->fitting);
  ASSERT_EQ(a->layouts.size(), b->layouts.size());
  for (std::size_t i = 0; i < a->layouts.size(); ++i) {
    EXPECT_EQ(describe(a->layouts[i].candidate), describe(b->layouts[i].candidate)) << i;
    EXPECT_EQ(a->layouts[i].estimate.time.tokens_per_s, b->layouts[i].estimate.time.tokens_per_s) << i;
  }
  ASSERT_EQ(a->rejections.size(), b->rejections.size());
  for (std::size_t i = 0; i < a->rejections.size(); ++i) {
    EXPECT_EQ(a->rejections[i].reason, b->rejections[i].reason);
    EXPECT_EQ(a->rejections[i].count, b->rejections[i].count);
    EXPECT_EQ(describe(a->rejections[i].first), describe(b->rejections[i].first));
    EXPECT_EQ(describe(a->rejections[i].closest), describe(b->rejections[i].closest));
  }
}

TEST(LayoutSearch, SmallModelOnOneNodeIsBestDataParallel) {
  // 350M parameters fit on every GPU many times over: splitting the model only adds
  // communication, so plain data parallelism (tp 1, pp 1) is among the best.
  const Plan base = base_plan("gpt3-350m", "dgx-a100-80gb", 8, 256);
  auto result = search_layouts(base, {});
  ASSERT_TRUE(result.ok()) << result.error_text();
  ASSERT_FALSE(result->layouts.empty());
  bool data_parallel = false;
  for (const auto& l : result->layouts)
    data_parallel |= l.candidate.tp == 1 && l.candidate.pp == 1 && l.candidate.cp == 1;
  EXPECT_TRUE(data_parallel) << "best: " << describe(result->layouts.front().candidate);
  EXPECT_EQ(result->layouts.front().candidate.tp * result->layouts.front().candidate.pp, 1);
}

TEST(LayoutSearch, ImpossibleRequestNamesMemory) {
  const Plan base = base_plan("gpt3-175b", "t4-pcie-node", 8, 64);
  auto result = search_layouts(base, {});
  ASSERT_TRUE(result.ok()) << result.error_text();
  EXPECT_TRUE(result->layouts.empty());
  EXPECT_EQ(result->fitting, 0);
  ASSERT_FALSE(result->rejections.empty());
  bool memory = false;
  for (const auto& r : result->rejections) memory |= r.reason == RejectReason::memory && r.count == result->evaluated;
  EXPECT_TRUE(memory);
  const std::string summary = rejection_summary(*result);
  EXPECT_NE(summary.find("no layout fits"), std::string::npos) << summary;
  EXPECT_NE(summary.find("does not fit in memory"), std::string::npos) << summary;
  EXPECT_NE(summary.find("closest to fitting"), std::string::npos) << summary;
}

TEST(LayoutSearch, IntegerChecksNameTheirReasonAndFirstExample) {
  // 12 GPUs, 16 heads: tp 3, 6 and 12 cannot split the heads; the first is tp 3.
  Plan base = base_plan("gpt3-1.3b", "dgx-a100-80gb", 12, 96);
  auto result = search_layouts(base, {});
  ASSERT_TRUE(result.ok()) << result.error_text();
  const Rejection* heads = nullptr;
  for (const auto& r : result->rejections)
    if (r.reason == RejectReason::tp_heads) heads = &r;
  ASSERT_NE(heads, nullptr);
  EXPECT_EQ(heads->first.tp, 3);
  EXPECT_NE(heads->detail.find("heads (16)"), std::string::npos) << heads->detail;
  for (const auto& l : result->layouts) EXPECT_EQ(16 % l.candidate.tp, 0);
}

TEST(LayoutSearch, FixedDimensionsAndBaseErrors) {
  Plan base = base_plan("gpt3-1.3b", "dgx-a100-80gb", 16, 128);
  SearchOptions options;
  options.space.tp = {2};
  options.space.zero_stage = {1};
  auto result = search_layouts(base, options);
  ASSERT_TRUE(result.ok()) << result.error_text();
  ASSERT_FALSE(result->layouts.empty());
  for (const auto& l : result->layouts) {
    EXPECT_EQ(l.candidate.tp, 2);
    EXPECT_EQ(l.plan.layout.zero_stage, 1);
  }
  options.space.tp = {3};  // not a divisor of 16 GPUs: nothing to search
  EXPECT_FALSE(search_layouts(base, options).ok());
  base.training.precision = Precision::fp8;  // A100 has no fp8: no layout can fix that
  auto bad = search_layouts(base, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().front().field, "training.precision");
  // DualPipe(V) alone: refused by name, with the schedules the search does run.
  base.training.precision = Precision::bf16;
  SearchOptions dual;
  dual.space.schedule = {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev};
  auto refused = search_layouts(base, dual);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.errors().front().field, "search.schedule");
  EXPECT_NE(refused.error_text().find("valid: gpipe, 1f1b, interleaved, zb-h1"), std::string::npos);
}

// A merged search (of variants `a` and `b`) accounts for every candidate of both and ranks the
// better of their bests first.
void expect_merge_of(const SearchResult& merged, const SearchResult& a, const SearchResult& b) {
  EXPECT_EQ(merged.enumerated, a.enumerated + b.enumerated);
  EXPECT_EQ(merged.fitting, a.fitting + b.fitting);
  std::int64_t rejected = 0;
  for (const auto& r : merged.rejections) rejected += r.count;
  EXPECT_EQ(rejected + merged.fitting, merged.enumerated);
  ASSERT_FALSE(merged.layouts.empty());
  const double best = std::min(a.layouts.front().estimate.time.iteration_s, b.layouts.front().estimate.time.iteration_s);
  EXPECT_DOUBLE_EQ(merged.layouts.front().estimate.time.iteration_s, best);
}

// SearchSpace::precision: one search per precision the GPU runs, merged into one ranking.
TEST(LayoutSearch, PrecisionsSearchEachAndMergeTheRanking) {
  Plan h100 = base_plan("llama-2-7b", "dgx-h100", 16, 256);
  SearchOptions one;
  one.top = 3;
  one.threads = 1;
  auto bf16 = search_layouts(h100, [&] { auto o = one; o.space.precision = {Precision::bf16}; return o; }());
  auto fp8 = search_layouts(h100, [&] { auto o = one; o.space.precision = {Precision::fp8}; return o; }());
  auto both = search_layouts(h100, [&] { auto o = one; o.space.precision = {Precision::bf16, Precision::fp8}; return o; }());
  ASSERT_TRUE(bf16.ok()) << bf16.error_text();
  ASSERT_TRUE(fp8.ok()) << fp8.error_text();
  ASSERT_TRUE(both.ok()) << both.error_text();
  expect_merge_of(*both, *bf16, *fp8);
  ASSERT_EQ(both->layouts.size(), 3u);
  EXPECT_EQ(bf16->layouts.front().plan.training.precision, Precision::bf16);
  EXPECT_EQ(fp8->layouts.front().plan.training.precision, Precision::fp8);
  EXPECT_EQ(fp8->layouts.front().plan.training.grad_precision, gradient_precision_for(Precision::fp8));
  EXPECT_TRUE(both->skipped_precisions.empty());

  // An A100 has no fp8: it is skipped and named, the rest is the bf16 search; fp8 alone is an error.
  Plan a100 = base_plan("llama-2-7b", "dgx-a100-80gb", 16, 256);
  auto skipped = search_layouts(a100, [&] { auto o = one; o.space.precision = {Precision::bf16, Precision::fp8}; return o; }());
  ASSERT_TRUE(skipped.ok()) << skipped.error_text();
  ASSERT_EQ(skipped->skipped_precisions.size(), 1u);
  EXPECT_EQ(skipped->skipped_precisions.front(), Precision::fp8);
  auto only = search_layouts(a100, [&] { auto o = one; o.space.precision = {Precision::fp8}; return o; }());
  ASSERT_FALSE(only.ok());
  EXPECT_EQ(only.errors().front().field, "search.precision");
}

// Offloading plans are searched with their offloading, costed candidate by candidate as
// estimate() costs them: only the ZeRO stages the offload needs, every counted candidate
// accounted for, and the best equal to the estimate of its own plan.
TEST(LayoutSearch, OffloadingPlansAreSearchedWithTheirOffloading) {
  for (auto [optimizer, params] : {std::pair{true, false}, std::pair{true, true}}) {
    Plan base = base_plan("llama-2-7b", "dgx-a100-40gb", 8, 64);
    base.layout.offload_optimizer = optimizer;
    base.layout.offload_params = params;
    SearchOptions options;
    options.top = 3;
    auto r = search_layouts(base, options);
    ASSERT_TRUE(r.ok()) << r.error_text();
    ASSERT_FALSE(r->layouts.empty());
    std::int64_t rejected = 0;
    for (const auto& rej : r->rejections) rejected += rej.count;
    EXPECT_EQ(rejected + r->fitting, r->enumerated);
    for (const auto& l : r->layouts) {
      EXPECT_TRUE(l.plan.layout.offload_optimizer);
      EXPECT_EQ(l.plan.layout.offload_params, params);
      EXPECT_GE(l.candidate.zero_stage, params ? 3 : 1) << describe(l.candidate);
      EXPECT_FALSE(has_errors(validate(l.plan))) << join_messages(validate(l.plan));
      EXPECT_GT(l.estimate.memory.stages.front().host_bytes, 0) << "states on the host";
    }
    auto again = estimate(r->layouts.front().plan);
    ASSERT_TRUE(again.ok());
    EXPECT_DOUBLE_EQ(again->time.iteration_s, r->layouts.front().estimate.time.iteration_s);
  }
}

// SearchSpace::offload: each offloading searched (the library-costed search for those that
// offload), merged into one ranking whose counts and best are the separate searches'.
TEST(LayoutSearch, OffloadChoicesSearchEachAndMerge) {
  const Plan base = base_plan("llama-2-7b", "dgx-a100-40gb", 8, 64);
  SearchOptions one;
  one.top = 3;
  Plan offloaded = base;
  offloaded.layout.offload_optimizer = true;
  auto plain = search_layouts(base, one);
  auto with = search_layouts(offloaded, one);
  SearchOptions both = one;
  ASSERT_TRUE(set_search_constraint(both.space, "offload", "none,optimizer", "offload").empty());
  auto merged = search_layouts(base, both);
  ASSERT_TRUE(plain.ok() && with.ok() && merged.ok()) << merged.error_text();
  expect_merge_of(*merged, *plain, *with);
  for (const auto& l : merged->layouts) EXPECT_FALSE(l.plan.layout.offload_params || l.plan.layout.offload_activations);
  EXPECT_EQ(describe_constraints(both.space), "offload none,optimizer");
  EXPECT_FALSE(set_search_constraint(both.space, "offload", "optimizer+gpu", "--offload").empty());
}

}  // namespace
}  // namespace plansight::estimator
