// The search's framework rules and constraints: with the rules on (the default), no ranked
// layout draws a layout warning from validate() (issue 17: the default plan's #1 layout had CP
// with standard attention and ZeRO-2 with PP); off, those layouts come back; bounds and lists
// narrow every dimension; constraint text parses as the CLI and the Search page type it.
#include <gtest/gtest.h>

#include "plansight/estimator/layout_search.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/search_constraints.h"

namespace plansight::estimator {
namespace {

std::vector<Diagnostic> layout_warnings(const Plan& plan) {
  std::vector<Diagnostic> out;
  for (auto& d : validate(plan)) {
    if (d.severity == Severity::warning && d.field.rfind("layout.", 0) == 0) out.push_back(d);
  }
  return out;
}

SearchOptions top(std::size_t n) {
  SearchOptions o;
  o.top = n;
  o.threads = 1;
  return o;
}

TEST(LayoutSearchRules, DefaultPlanRanksNoLayoutThatValidateWarnsAbout) {
  const Plan base = default_plan();
  ASSERT_EQ(base.training.attention, AttentionKernel::standard) << "the issue's case: the default plan";
  auto r = search_layouts(base, top(10));
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_EQ(r->layouts.size(), 10u);
  for (const auto& l : r->layouts) {
    EXPECT_TRUE(layout_warnings(l.plan).empty())
        << describe(l.candidate) << ": " << join_messages(layout_warnings(l.plan));
    EXPECT_EQ(l.candidate.cp, 1) << "standard attention";
    EXPECT_TRUE(l.candidate.pp == 1 || l.candidate.zero_stage < 2) << describe(l.candidate);
  }
  bool cp = false, zero = false;
  for (const auto& rej : r->rejections) {
    cp |= rej.reason == RejectReason::cp_attention && rej.count > 0;
    zero |= rej.reason == RejectReason::zero_pipeline && rej.count > 0;
  }
  EXPECT_TRUE(cp && zero) << rejection_summary(*r);
  EXPECT_NE(rejection_summary(*r).find("context parallelism needs flash attention"), std::string::npos);
}

TEST(LayoutSearchRules, RulesOffRanksWhatTheModelCostsAlone) {
  SearchOptions o = top(3);
  o.space.framework_rules = false;
  auto r = search_layouts(default_plan(), o);
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_FALSE(r->layouts.empty());
  const Candidate& best = r->layouts.front().candidate;  // the issue's #1: tp 2, pp 8, cp 4, zero 2
  EXPECT_GT(best.cp, 1) << describe(best);
  EXPECT_GE(best.zero_stage, 2) << describe(best);
  EXPECT_FALSE(layout_warnings(r->layouts.front().plan).empty());
}

TEST(LayoutSearchRules, FlashAttentionAllowsContextParallelism) {
  Plan base = default_plan();
  base.training.attention = AttentionKernel::flash;
  SearchOptions o = top(3);
  o.space.cp = {2};
  auto r = search_layouts(base, o);
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_FALSE(r->layouts.empty());
  for (const auto& l : r->layouts) {
    EXPECT_EQ(l.candidate.cp, 2);
    EXPECT_TRUE(layout_warnings(l.plan).empty()) << join_messages(layout_warnings(l.plan));
  }
}

TEST(LayoutSearchRules, BoundsNarrowEveryDimension) {
  SearchOptions o = top(20);
  o.space.tp_bound = {2, 4};
  o.space.pp_bound = {SearchBound{}.min, 8};
  o.space.micro_batch_bound = {2, 4};
  auto r = search_layouts(default_plan(), o);
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_FALSE(r->layouts.empty());
  for (const auto& l : r->layouts) {
    EXPECT_GE(l.candidate.tp, 2);
    EXPECT_LE(l.candidate.tp, 4);
    EXPECT_LE(l.candidate.pp, 8);
    EXPECT_GE(l.candidate.micro_batch, 2);
    EXPECT_LE(l.candidate.micro_batch, 4);
  }
}

TEST(SearchConstraints, ParsesValuesListsAndRanges) {
  SearchSpace s;
  EXPECT_TRUE(set_search_constraint(s, "tp", "8", "--tp").empty());
  EXPECT_EQ(s.tp, (std::vector<std::int64_t>{8}));
  EXPECT_TRUE(set_search_constraint(s, "tp", "2, 4,8", "--tp").empty());
  EXPECT_EQ(s.tp, (std::vector<std::int64_t>{2, 4, 8}));
  EXPECT_TRUE(set_search_constraint(s, "tp", "2..8", "--tp").empty());
  EXPECT_TRUE(s.tp.empty());
  EXPECT_EQ(s.tp_bound.min, 2);
  EXPECT_EQ(s.tp_bound.max, 8);
  EXPECT_TRUE(set_search_constraint(s, "pp", "..16", "--pp").empty());
  EXPECT_EQ(s.pp_bound.max, 16);
  EXPECT_TRUE(set_search_constraint(s, "zero_stage", "0..1", "--zero").empty());
  EXPECT_EQ(s.zero_stage, (std::vector<std::int64_t>{0, 1}));
  EXPECT_TRUE(set_search_constraint(s, "recompute", "selective,full", "--recompute").empty());
  EXPECT_EQ(s.recompute, (std::vector<Recompute>{Recompute::selective, Recompute::full}));
  EXPECT_TRUE(set_search_constraint(s, "sequence_parallel", "off", "SP").empty());
  EXPECT_EQ(s.sequence_parallel, std::optional<bool>(false));
  s.framework_rules = false;
  EXPECT_EQ(describe_constraints(s),
            "tp 2..8, pp ..16, zero_stage 0,1, recompute selective,full, sequence parallel off, framework rules off");
  EXPECT_TRUE(set_search_constraint(s, "tp", "any", "--tp").empty());
  EXPECT_EQ(s.tp_bound.min, SearchBound{}.min);
  EXPECT_EQ(describe_constraints(SearchSpace{}), "none");
}

TEST(SearchConstraints, ErrorsNameTheFieldTheTextAndWhatIsValid) {
  SearchSpace s;
  struct Case {
    const char* dimension;
    const char* text;
    const char* expect;
  };
  for (const Case& c : {Case{"tp", "0x10", "\"0x10\" is not a whole number"}, Case{"tp", "8..2", "out of range"},
                        Case{"zero_stage", "4", "from 0 to 3"}, Case{"tp", "..", "is not a range"},
                        Case{"recompute", "some", "valid: any or a list of"}, Case{"cp", "-2", "not a whole number"}}) {
    const auto errors = set_search_constraint(s, c.dimension, c.text, "--field");
    ASSERT_EQ(errors.size(), 1u) << c.text;
    EXPECT_EQ(errors[0].field, "--field");
    EXPECT_NE(errors[0].message.find(c.expect), std::string::npos) << errors[0].message;
  }
  EXPECT_TRUE(s.tp.empty() && s.zero_stage.empty() && s.recompute.empty()) << "errors leave the space as it was";
  EXPECT_FALSE(set_search_constraint(s, "heads", "2", "x").empty());
}

}  // namespace
}  // namespace plansight::estimator
