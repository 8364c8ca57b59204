// Rank placement: Megatron-LM's default order (tp-cp-dp-pp, TP innermost) puts a TP group on
// consecutive GPUs of one node; a pp-first order spreads it; every rank's coordinates are unique
// and its group members share all other coordinates; links follow nodes.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "plansight/estimator/placement.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

Plan small_plan() {
  Plan p = default_plan();  // Selene-like nodes of 8 A100s
  p.cluster.gpus = 32;
  p.layout.tp = 4;
  p.layout.pp = 2;
  p.training.global_batch = 64;
  return p;  // dp = 32 / 8 = 4
}

TEST(Placement, DefaultOrderPutsTpInsideANode) {
  const Plan p = small_plan();
  const auto ranks = place_ranks(p);
  ASSERT_EQ(ranks.size(), 32u);
  // rank 13 = tp 1 + 4 * (dp 3) + 16 * (pp 0): node 1, GPU 5.
  const RankPlace& r = ranks[13];
  EXPECT_EQ(std::tie(r.tp, r.cp, r.dp, r.pp, r.node, r.local),
            std::make_tuple(std::int64_t{1}, std::int64_t{0}, std::int64_t{3}, std::int64_t{0}, std::int64_t{1}, std::int64_t{5}));
  EXPECT_EQ(group_members(p, 13, Group::tp), (std::vector<std::int64_t>{12, 13, 14, 15}));
  EXPECT_EQ(group_members(p, 13, Group::dp), (std::vector<std::int64_t>{1, 5, 9, 13}));
  EXPECT_EQ(group_members(p, 13, Group::pp), (std::vector<std::int64_t>{13, 29}));
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> seen;
  for (const auto& x : ranks) {
    EXPECT_TRUE(seen.insert({x.tp, x.cp, x.dp, x.pp}).second) << "rank " << x.rank;
    for (Group g : {Group::tp, Group::dp, Group::pp}) {
      for (std::int64_t m : group_members(p, x.rank, g)) {
        const RankPlace& y = ranks[static_cast<std::size_t>(m)];
        EXPECT_TRUE(g == Group::tp || y.tp == x.tp) << "rank " << m;
        EXPECT_TRUE(g == Group::dp || y.dp == x.dp) << "rank " << m;
        EXPECT_TRUE(g == Group::pp || y.pp == x.pp) << "rank " << m;
      }
    }
  }
  const auto links = group_links(p);
  EXPECT_FALSE(links[0].crosses_nodes) << "TP 4 of stride 1 inside a node of 8";
  EXPECT_TRUE(links[2].crosses_nodes) << "DP 4 of stride 4 spans 16 ranks";
  EXPECT_TRUE(links[3].crosses_nodes) << "PP of stride 16";
  EXPECT_DOUBLE_EQ(links[0].bandwidth_bytes_per_s, 300e9) << "Selene's NVSwitch, nominal";
}

TEST(Placement, PipelineFirstOrderSpreadsTensorParallelism) {
  Plan p = small_plan();
  ASSERT_TRUE(parse_placement("pp-dp-cp-tp", p.layout.placement));
  EXPECT_EQ(group_members(p, 0, Group::tp), (std::vector<std::int64_t>{0, 8, 16, 24}));
  EXPECT_TRUE(group_links(p)[0].crosses_nodes) << "TP ranks 8 apart sit in different nodes";
  EXPECT_EQ(group_name(Group::cp), "CP");
}

}  // namespace
}  // namespace plansight::estimator
