// Communication cost of collectives and point-to-point transfers: latency + size / bandwidth
// with the ring factors nccl-tests uses for bus bandwidth (NVIDIA nccl-tests, PERFORMANCE.md):
// all-reduce moves 2(n-1)/n of the buffer per GPU, all-gather and reduce-scatter (n-1)/n,
// broadcast/reduce and send/receive 1. Which link a group uses follows rank placement.
#pragma once

#include <cstdint>

#include "plansight/estimator/cluster_spec.h"
#include "plansight/estimator/layout_spec.h"

namespace plansight::estimator {

enum class Collective : std::uint8_t { all_reduce, all_gather, reduce_scatter, broadcast, send_recv };

// nccl-tests' bus-bandwidth factor: bus bytes moved per GPU per byte of buffer.
double bus_factor(Collective op, std::int64_t ranks);
// Bytes each GPU sends in a ring collective over `ranks` GPUs on a buffer of `bytes`:
// bus_factor x bytes (all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, a send its
// bytes); none within one GPU. The communication volume of Rajbhandari et al. 2020, Sec. 7.
double sent_bytes(Collective op, double bytes, std::int64_t ranks);

struct Link {
  double bandwidth_bytes_per_s = 0;  // achievable per GPU, one direction (efficiency applied)
  double latency_s = 0;              // per algorithm step
  bool crosses_nodes = false;
};

// Seconds for a collective over `ranks` GPUs on a buffer of `bytes` (the full tensor, as
// nccl-tests' "size"). Ring steps: 2(n-1) for all-reduce, n-1 for gathers and scatters; across
// nodes NCCL's tree all-reduce bounds the latency term at 2 log2(n) steps.
double collective_seconds(Collective op, double bytes, std::int64_t ranks, const Link& link);

// Groups of a layout, placed in the layout's placement order (TP innermost by default):
// a group of `size` members `stride` ranks apart.
std::int64_t group_stride(const LayoutSpec& layout, std::int64_t dp, Group group);

// The link of `size` ranks `stride` apart (see group_link).
Link span_link(const ClusterSpec& cluster, std::int64_t stride, std::int64_t size, double intra_efficiency,
               double inter_efficiency);

// The link a group's traffic crosses: NVLink/PCIe inside a node when all members share one,
// otherwise the network. `efficiency` is the achievable fraction of the nominal bandwidth.
Link group_link(const ClusterSpec& cluster, const LayoutSpec& layout, std::int64_t dp, Group group,
                double intra_efficiency, double inter_efficiency);

}  // namespace plansight::estimator
