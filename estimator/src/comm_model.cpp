// Collective cost model; see comm_model.h for the sources of the factors.
#include "plansight/estimator/comm_model.h"

#include <algorithm>
#include <cmath>

namespace plansight::estimator {

double bus_factor(Collective op, std::int64_t ranks) {
  const double n = static_cast<double>(std::max<std::int64_t>(ranks, 1));
  switch (op) {
    case Collective::all_reduce: return 2 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter: return (n - 1) / n;
    case Collective::broadcast:
    case Collective::send_recv: return 1;
  }
  return 1;
}

double collective_seconds(Collective op, double bytes, std::int64_t ranks, const Link& link) {
  if (bytes <= 0) return 0;
  if (ranks <= 1 && op != Collective::send_recv) return 0;
  const double n = static_cast<double>(ranks);
  double steps = 1;
  switch (op) {
    case Collective::all_reduce:
      steps = 2 * (n - 1);
      if (link.crosses_nodes) steps = std::min(steps, 2 * std::ceil(std::log2(n)));
      break;
    case Collective::all_gather:
    case Collective::reduce_scatter: steps = n - 1; break;
    case Collective::broadcast: steps = std::ceil(std::log2(std::max(n, 2.0))); break;
    case Collective::send_recv: steps = 1; break;
  }
  const double bandwidth = link.bandwidth_bytes_per_s > 0 ? link.bandwidth_bytes_per_s : 1.0;
  return steps * link.latency_s + bus_factor(op, ranks) * bytes / bandwidth;
}

std::int64_t group_stride(const LayoutSpec& l, std::int64_t dp, Group group) {
  switch (group) {
    case Group::tp: return 1;
    case Group::cp: return l.tp;
    case Group::dp: return l.tp * l.cp;
    case Group::pp: return l.tp * l.cp * dp;
  }
  return 1;
}

Link group_link(const ClusterSpec& cluster, const LayoutSpec& layout, std::int64_t dp, Group group,
                double intra_efficiency, double inter_efficiency) {
  std::int64_t size = 1;
  switch (group) {
    case Group::tp: size = layout.tp; break;
    case Group::cp: size = layout.cp; break;
    case Group::dp: size = dp; break;
    case Group::pp: size = 2; break;  // traffic goes between neighbouring stages
  }
  const std::int64_t stride = group_stride(layout, dp, group);
  // Members r, r + stride, ... share a node when the group's span fits in one (ranks are placed
  // on nodes in order, gpus_per_node at a time).
  const bool inside = stride * size <= cluster.gpus_per_node && cluster.gpus_per_node > 0;
  Link link;
  link.crosses_nodes = !inside;
  if (inside) {
    link.bandwidth_bytes_per_s = cluster.intra_node_bandwidth_bytes_per_s * intra_efficiency;
    link.latency_s = cluster.intra_node_latency_s;
  } else {
    // NCCL spreads a group's rings over the NICs of its GPUs in each node, so a group with g
    // members per node moves g NICs' worth across nodes (e.g. ~192 GB/s all-reduce bus
    // bandwidth between DGX A100 nodes with 8 x 200 Gb/s; docs/time-model-sources.md, item 4),
    // never more than the NVLink between them.
    const double per_node = std::clamp<double>(static_cast<double>(cluster.gpus_per_node) / static_cast<double>(stride), 1.0,
                                               static_cast<double>(size));
    link.bandwidth_bytes_per_s = std::min(cluster.inter_node_bandwidth_bytes_per_s * inter_efficiency * per_node,
                                          cluster.intra_node_bandwidth_bytes_per_s * intra_efficiency);
    if (link.bandwidth_bytes_per_s <= 0) link.bandwidth_bytes_per_s = cluster.inter_node_bandwidth_bytes_per_s * inter_efficiency;
    link.latency_s = cluster.inter_node_latency_s;
  }
  return link;
}

}  // namespace plansight::estimator
