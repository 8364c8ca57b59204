// Where each rank of a layout sits: its node and local GPU, and its TP/CP/DP/PP coordinates,
// following layout.placement (innermost first: with Megatron-LM's tp-cp-dp-pp, rank r has
// tp = r mod TP, cp = (r / TP) mod CP, ...); the members of each parallel group of a rank; and
// the link each kind of group crosses (inside a node, or the network), at nominal bandwidth.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct RankPlace {
  std::int64_t rank = 0, node = 0, local = 0;  // local: the GPU's index inside its node
  std::int64_t tp = 0, cp = 0, dp = 0, pp = 0;
};

// Every rank of the plan's world (tp * cp * dp * pp, which validation makes the GPU count).
std::vector<RankPlace> place_ranks(const Plan& plan);
// The ranks of `rank`'s group of kind `group`, ascending.
std::vector<std::int64_t> group_members(const Plan& plan, std::int64_t rank, Group group);

struct GroupLink {
  Group group;
  std::int64_t size = 1, stride = 1;
  bool crosses_nodes = false;
  double bandwidth_bytes_per_s = 0;  // nominal, one direction per GPU
};
std::vector<GroupLink> group_links(const Plan& plan);  // tp, cp, dp, pp
std::string_view group_name(Group group);               // "TP", "CP", "DP", "PP"

}  // namespace plansight::estimator
