// Plans side by side: the changed fields of two plans, and the quantities of their estimates —
// ZeRO-3 against DDP for the 7.5B example on 64 GPUs divides the model states by 64 (Rajbhandari
// et al. 2020: (2 + 2 + 12) psi -> (2 + 2 + 12) psi / N_d) and leaves activations alone.
#include <gtest/gtest.h>

#include <cmath>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/examples.h"
#include "plansight/estimator/plan_diff.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

const PlanQuantity& find(const std::vector<PlanQuantity>& q, const std::string& name) {
  for (const auto& x : q) {
    if (x.name == name) return x;
  }
  throw std::runtime_error("no quantity " + name);
}

TEST(PlanDiff, ChangedFieldsLeafByLeaf) {
  Plan a = default_plan(), b = default_plan();
  EXPECT_TRUE(plan_field_changes(a, b).empty());
  b.layout.zero_stage = 1;
  b.training.global_batch = 3072;
  const auto changes = plan_field_changes(a, b);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].path, "layout.zero_stage");
  EXPECT_EQ(changes[0].a, 0);
  EXPECT_EQ(changes[0].b, 1);
  EXPECT_EQ(changes[1].path, "training.global_batch");
  b = a;
  b.model = *find_model("llama-2-7b");
  bool hidden = false;
  for (const auto& c : plan_field_changes(a, b)) hidden = hidden || (c.path == "model.hidden" && c.a == 12288 && c.b == 4096);
  EXPECT_TRUE(hidden) << "a different model shows as its fields";
}

TEST(PlanDiff, ZeroThreeDividesModelStatesByDataParallelism) {
  auto example = find_example("zero-stages-7.5b");
  ASSERT_TRUE(example.ok());
  auto ddp = example_plan(*example, 0), zero3 = example_plan(*example, 3);
  ASSERT_TRUE(ddp.ok() && zero3.ok());
  auto ea = estimate(*ddp), eb = estimate(*zero3);
  ASSERT_TRUE(ea.ok() && eb.ok());
  const auto q = compare_estimates(*ea, *eb);
  for (const char* states : {"weights", "gradients", "optimizer states"}) {
    EXPECT_NEAR(find(q, states).ratio(), 1.0 / 64, 1e-3) << states;
  }
  EXPECT_DOUBLE_EQ(find(q, "activations").ratio(), 1.0);
  EXPECT_DOUBLE_EQ(find(q, "parameters").delta(), 0.0);
  EXPECT_EQ(find(q, "pipeline bubble").a, 0.0) << "PP 1 has no bubble, not 3e-11 s";
  EXPECT_TRUE(std::isnan(find(q, "pipeline bubble").ratio()));
  EXPECT_TRUE(find(q, "iteration").available);
  const auto& total = find(q, "total");
  EXPECT_NEAR(total.a, ea->memory.peak.total_bytes() / (1024.0 * 1024 * 1024), 1e-9);
}

TEST(PlanDiff, WithoutATimeEstimateTimeRowsAreUnavailable) {
  Plan p = default_plan();
  auto e = estimate(p);
  ASSERT_TRUE(e.ok());
  Estimate no_time = *e;
  no_time.time = TimeEstimate{};
  const auto q = compare_estimates(*e, no_time);
  EXPECT_FALSE(find(q, "iteration").available);
  EXPECT_FALSE(find(q, "cost").available);
  EXPECT_TRUE(find(q, "total").available);
}

}  // namespace
}  // namespace plansight::estimator
