// The estimate's time breakdown is its predicted timeline read by the timeline rule: every
// communication part is the first rank's time in that group's transfers while it does no other
// work (rank_breakdown(), timeline_metrics.h, the rule that measures probe and imported
// timelines), split by group; the bubble is the rest of its idle time. One simulation gives it,
// with its timeline or without (sparse tables, the steady state skipped).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/interval_set.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_metrics.h"

namespace plansight::estimator {
namespace {

struct Case {
  std::string name;
  Plan plan;
};

// Plans that exercise every group and schedule: the default plan (GPT-3 175B, TP 8 x PP 8 x DP
// 16, 1F1B) with 16 micro-batches, and changes of it one at a time.
std::vector<Case> cases() {
  Plan base = default_plan();
  base.training.global_batch = 256;
  std::vector<Case> out = {{"1f1b", base}};
  const auto with = [&](const std::string& name, auto change) {
    Plan p = base;
    change(p);
    out.push_back({name, p});
  };
  with("interleaved v3", [](Plan& p) { p.layout.schedule = PipelineSchedule::interleaved, p.layout.vpp = 3; });
  with("gpipe", [](Plan& p) { p.layout.schedule = PipelineSchedule::gpipe; });
  with("zb-h1", [](Plan& p) { p.layout.schedule = PipelineSchedule::zb_h1; });
  with("dualpipev", [](Plan& p) { p.layout.schedule = PipelineSchedule::dualpipev, p.layout.vpp = 2; });
  with("dualpipe", [](Plan& p) { p.layout.schedule = PipelineSchedule::dualpipe, p.layout.vpp = 2; });
  with("zero-3", [](Plan& p) { p.layout.zero_stage = 3; });
  with("zero-1, reduction after the backward", [](Plan& p) { p.layout.zero_stage = 1, p.layout.dp_overlap = false; });
  with("cp 2", [](Plan& p) { p.layout.cp = 2, p.layout.dp = 0; });
  with("tp overlap", [](Plan& p) { p.layout.sequence_parallel = true, p.layout.tp_overlap = true; });
  Plan moe = base;
  moe.model = *find_model("mixtral-8x7b");
  moe.cluster.gpus = 64;
  moe.layout.tp = 2, moe.layout.pp = 4, moe.layout.dp = 0, moe.layout.ep = 4, moe.layout.sequence_parallel = true;
  moe.training.global_batch = 64;
  out.push_back({"mixtral ep 4", moe});
  return out;
}

// The first rank's exposed time per group, read off the predicted timeline: each transfer on its
// communication lanes less what its compute spans (the optimizer's included) cover, by its
// group's label (time_model.h's comm_span_labels) or, for sends, its kind.
std::map<std::string, double> exposed_by_group(const Timeline& timeline) {
  std::vector<Interval> work;
  for (const Track& t : timeline.tracks) {
    if (t.rank != 0 || t.lane != Lane::compute) continue;
    for (const Span& s : t.spans) work.push_back({s.start_ns, s.end_ns()});
  }
  work = merge_intervals(std::move(work));
  std::map<std::string, double> out;
  for (const Track& t : timeline.tracks) {
    if (t.rank != 0 || t.lane != Lane::communication) continue;
    for (const Span& s : t.spans) {
      const std::string name = timeline.name_of(s);
      const std::string group = s.kind == SpanKind::send                      ? "pp"
                                : name.rfind("TP ", 0) == 0                   ? "tp"
                                : name.rfind("CP ", 0) == 0                   ? "cp"
                                : name.rfind("EP ", 0) == 0                   ? "ep"
                                : name.rfind("DP ", 0) == 0 || name.rfind("ZeRO", 0) == 0 ? "dp"
                                                                              : "other: " + name;
      const std::int64_t hidden = intersection_length({{s.start_ns, s.end_ns()}}, work);
      out[group] += static_cast<double>(s.duration_ns - hidden) * 1e-9;
    }
  }
  return out;
}

TEST(TimeBreakdown, EveryPartIsTheTimelineRuleOnTheFirstRank) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    TimePrediction prediction;
    const auto e = estimate_with_prediction(c.plan, nullptr, prediction);
    ASSERT_TRUE(e.ok()) << e.error_text();
    const TimeBreakdown& b = prediction.breakdown;
    auto exposed = exposed_by_group(prediction.timeline);
    // Spans are whole nanoseconds: a part may differ from its sum of spans by a nanosecond a span.
    std::size_t spans = 0;
    for (const Track& t : prediction.timeline.tracks) spans += t.spans.size();
    const double tolerance = 2e-9 * static_cast<double>(spans);
    EXPECT_NEAR(b.tp_comm_s, exposed["tp"], tolerance);
    EXPECT_NEAR(b.cp_comm_s, exposed["cp"], tolerance);
    EXPECT_NEAR(b.ep_comm_s, exposed["ep"], tolerance);
    EXPECT_NEAR(b.pp_comm_s, exposed["pp"], tolerance);
    EXPECT_NEAR(b.dp_comm_s, exposed["dp"], tolerance);
    double total = 0;
    for (const auto& [group, s] : exposed) {
      EXPECT_EQ(group.rfind("other", 0), std::string::npos) << group;
      total += s;
    }
    // The groups split rank_breakdown()'s exposed communication, and the bubble is its idle time.
    const std::vector<RankBreakdown> ranks = rank_breakdown(prediction.timeline);
    ASSERT_FALSE(ranks.empty());
    EXPECT_NEAR(total, static_cast<double>(ranks[0].exposed_communication_ns) * 1e-9, tolerance);
    EXPECT_NEAR(b.bubble_s, static_cast<double>(ranks[0].idle_ns) * 1e-9, tolerance);
    EXPECT_GT(b.pp_comm_s, 0) << "every plan here sends";
    EXPECT_NEAR(b.total_s(), prediction.iteration_s, 1e-9 * prediction.iteration_s);
  }
}

TEST(TimeBreakdown, WithoutATimelineTheSamePartsFromOneSimulation) {
  // The estimate without a timeline runs a sparse table and skips the steady state (the parts
  // then come from lists the skip repeats); with 512 micro-batches every schedule here skips.
  for (Case c : cases()) {
    SCOPED_TRACE(c.name);
    c.plan.training.global_batch *= 32;
    const auto e = estimate(c.plan);
    ASSERT_TRUE(e.ok()) << e.error_text();
    const std::int64_t vocab = e->padded_vocab;
    TimeModelOptions drawn, lean;
    lean.keep_timeline = false;
    const auto with = predict_time(c.plan, vocab, drawn);
    const auto without = predict_time(c.plan, vocab, lean);
    ASSERT_TRUE(with.ok()) << with.error_text();
    ASSERT_TRUE(without.ok()) << without.error_text();
    EXPECT_GT(without->skipped_ops, 0);
    EXPECT_EQ(with->skipped_ops, 0);
    const TimeBreakdown &a = with->breakdown, &b = without->breakdown;
    const double ns = 1e-9 * static_cast<double>(with->simulated_ops);  // rounding, a nanosecond an op at most
    EXPECT_EQ(without->iteration_s, with->iteration_s);
    EXPECT_NEAR(b.pp_comm_s, a.pp_comm_s, ns);
    EXPECT_NEAR(b.bubble_s, a.bubble_s, ns);
    EXPECT_NEAR(b.dp_comm_s, a.dp_comm_s, ns);
    EXPECT_EQ(b.tp_comm_s, a.tp_comm_s);
    EXPECT_EQ(b.compute_s, a.compute_s);
  }
}

TEST(TimeBreakdown, SixtyFourStagesSkippedOneWayOrAnotherKeepTheirParts) {
  // Narayanan et al.'s 1 T model on 3072 GPUs (TP 8 x PP 64) with 512 micro-batches and ZeRO-3
  // gathers not prefetched: the lean run skips most of its steady state (by whole periods, rank
  // by rank or time by time: steady_state.h), and its parts equal the drawn run's, which skips
  // nothing.
  for (const PipelineSchedule schedule : {PipelineSchedule::one_f_one_b, PipelineSchedule::zb_h1, PipelineSchedule::dualpipev}) {
    Plan plan = default_plan();
    plan.model = *find_model("narayanan-1008b");
    plan.cluster.gpus = 3072;
    plan.layout.tp = 8, plan.layout.pp = 64, plan.layout.dp = 0, plan.layout.zero_stage = 3;
    plan.layout.schedule = schedule, plan.layout.vpp = schedule == PipelineSchedule::dualpipev ? 2 : 1;
    plan.training.zero3_prefetch = false;
    plan.training.global_batch = 6 * 512;
    SCOPED_TRACE(std::string(to_string(schedule)));
    const auto e = estimate(plan);
    ASSERT_TRUE(e.ok()) << e.error_text();
    TimeModelOptions lean;
    lean.keep_timeline = false;
    const auto with = predict_time(plan, e->padded_vocab);
    const auto without = predict_time(plan, e->padded_vocab, lean);
    ASSERT_TRUE(with.ok() && without.ok());
    EXPECT_GT(without->skipped_ops, 10'000);
    EXPECT_EQ(without->iteration_s, with->iteration_s);
    EXPECT_EQ(without->breakdown.pp_comm_s, with->breakdown.pp_comm_s);
    EXPECT_EQ(without->breakdown.bubble_s, with->breakdown.bubble_s);
    EXPECT_EQ(without->breakdown.dp_comm_s, with->breakdown.dp_comm_s);
    EXPECT_GT(with->breakdown.pp_comm_s + with->breakdown.bubble_s, 0);
  }
}

TEST(TimeBreakdown, TheClosedFormCountsTheSameSendsWhereItKnowsTheWaits) {
  // For plans too long to simulate the estimate takes the closed form (closed_form.h's
  // exposed_sends_seconds): the same quantity, exact where its first rank's waits are known
  // (here the LM head makes the last stage the slowest), a lower bound with interleaving.
  for (const Case& c : cases()) {
    const bool known = c.name == "1f1b" || c.name == "gpipe" || c.name == "zb-h1";
    if (!known && c.name != "interleaved v3") continue;
    SCOPED_TRACE(c.name);
    const auto e = estimate(c.plan);
    ASSERT_TRUE(e.ok()) << e.error_text();
    const auto simulated = predict_time(c.plan, e->padded_vocab);
    ASSERT_TRUE(simulated.ok()) << simulated.error_text();
    const TimePrediction closed = predict_time_closed_form(c.plan, e->padded_vocab, nullptr);
    if (known) {
      EXPECT_NEAR(closed.breakdown.pp_comm_s, simulated->breakdown.pp_comm_s, 1e-6);
    } else {
      EXPECT_LE(closed.breakdown.pp_comm_s, simulated->breakdown.pp_comm_s);
    }
    EXPECT_NEAR(closed.breakdown.total_s(), closed.iteration_s, 1e-9 * closed.iteration_s);
  }
}

}  // namespace
}  // namespace plansight::estimator
