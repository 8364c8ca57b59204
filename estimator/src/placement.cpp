// placement.h: a rank's coordinate in dimension g is (rank / stride_g) mod size_g, with the
// strides of comm_model's group_stride (the placement order's running products).
#include "plansight/estimator/placement.h"

namespace plansight::estimator {
namespace {

std::int64_t size_of(const Plan& plan, Group g) {
  switch (g) {
    case Group::tp: return plan.layout.tp;
    case Group::cp: return plan.layout.cp;
    case Group::dp: return plan.dp();
    case Group::pp: return plan.layout.pp;
  }
  return 1;
}

std::int64_t coordinate(const Plan& plan, std::int64_t rank, Group g) {
  return rank / group_stride(plan.layout, plan.dp(), g) % size_of(plan, g);
}

}  // namespace

std::string_view group_name(Group group) {
  switch (group) {
    case Group::tp: return "TP";
    case Group::cp: return "CP";
    case Group::dp: return "DP";
    case Group::pp: return "PP";
  }
  return "?";
}

std::vector<RankPlace> place_ranks(const Plan& plan) {
  const std::int64_t world = plan.layout.tp * plan.layout.cp * plan.dp() * plan.layout.pp;
  const std::int64_t per_node = std::max<std::int64_t>(1, plan.cluster.gpus_per_node);
  std::vector<RankPlace> out;
  out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, world)));
  for (std::int64_t r = 0; r < world; ++r) {
    out.push_back({r, r / per_node, r % per_node, coordinate(plan, r, Group::tp), coordinate(plan, r, Group::cp),
                   coordinate(plan, r, Group::dp), coordinate(plan, r, Group::pp)});
  }
  return out;
}

std::vector<std::int64_t> group_members(const Plan& plan, std::int64_t rank, Group group) {
  const std::int64_t stride = group_stride(plan.layout, plan.dp(), group), size = size_of(plan, group);
  const std::int64_t first = rank - coordinate(plan, rank, group) * stride;
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < size; ++i) out.push_back(first + i * stride);
  return out;
}

std::vector<GroupLink> group_links(const Plan& plan) {
  std::vector<GroupLink> out;
  for (Group g : {Group::tp, Group::cp, Group::dp, Group::pp}) {
    const Link link = group_link(plan.cluster, plan.layout, plan.dp(), g, 1.0, 1.0);
    out.push_back({g, size_of(plan, g), group_stride(plan.layout, plan.dp(), g), link.crosses_nodes,
                   link.bandwidth_bytes_per_s});
  }
  return out;
}

}  // namespace plansight::estimator
