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

double sent_bytes(Collective op, double bytes, std::int64_t ranks) {
  if (bytes <= 0 || (ranks <= 1 && op != Collective::send_recv)) return 0;
  return bus_factor(op, ranks) * bytes;
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
  std::int64_t stride = 1;
  for (Group g : l.placement) {
    if (g == group) return stride;
    switch (g) {
      case Group::tp: stride *= l.tp; break;
      case Group::cp: stride *= l.cp; break;
      case Group::dp: stride *= dp; break;
      case Group::pp: stride *= l.pp; break;
    }
  }
  return stride;
}

std::string to_string(const Placement& placement) {
  std::string out;
  for (Group g : placement) {
    if (!out.empty()) out += '-';
    out += g == Group::tp ? "tp" : g == Group::cp ? "cp" : g == Group::dp ? "dp" : "pp";
  }
  return out;
}

bool parse_placement(const std::string& text, Placement& out) {
  Placement p{};
  std::size_t start = 0;
  bool seen[4] = {false, false, false, false};
  for (int i = 0; i < 4; ++i) {
    const std::size_t end = text.find('-', start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    Group g;
    if (part == "tp") g = Group::tp;
    else if (part == "cp") g = Group::cp;
    else if (part == "dp") g = Group::dp;
    else if (part == "pp") g = Group::pp;
    else return false;
    if (seen[static_cast<int>(g)]) return false;
    seen[static_cast<int>(g)] = true;
    p[static_cast<std::size_t>(i)] = g;
    if (i < 3 && end == std::string::npos) return false;
    start = end + 1;
    if (i == 3 && end != std::string::npos) return false;
  }
  out = p;
  return true;
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
  return span_link(cluster, group_stride(layout, dp, group), size, intra_efficiency, inter_efficiency);
}

Link span_link(const ClusterSpec& cluster, std::int64_t stride, std::int64_t size, double intra_efficiency,
               double inter_efficiency) {
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
