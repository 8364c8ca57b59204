// Collective calls and their algorithm and bus bandwidth, with the correction factors of
// nccl-tests (NVIDIA/nccl-tests doc/PERFORMANCE.md): busbw = algbw x factor, where
// algbw = S / t and S is the nccl-tests "size" of the operation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// One collective as executed on one rank. Importers fill it from trace metadata (Kineto's NCCL
// kernel args); collectives_from_timeline derives it from span names and bytes.
struct CollectiveCall {
  std::int32_t rank = 0;
  CollectiveKind kind = CollectiveKind::unknown;
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  // nccl-tests S in bytes: all-reduce, broadcast, reduce: the buffer; all-gather: the gathered
  // output (count per rank x n); reduce-scatter: the input (count per rank x n); all-to-all: the
  // whole send buffer; send/recv: the message. 0 when unknown.
  double bytes = 0;
  std::int32_t group_size = 0;  // ranks in the communicator; 0 when unknown
  std::string name;             // kernel name
  std::string process_group;    // e.g. PyTorch "Process Group Name"
  std::string dtype;            // e.g. "BFloat16"
};

// nccl-tests bus-bandwidth factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter and
// all_to_all (n-1)/n; broadcast, reduce, send, recv, send_recv 1. 0 for an unknown kind or n < 1.
double bus_bandwidth_factor(CollectiveKind kind, std::int32_t group_size);

struct CollectiveBandwidth {
  double algbw_bytes_per_s = 0;  // S / t
  double busbw_bytes_per_s = 0;  // algbw x factor
};

// Zero bandwidths when bytes, duration or group size are unknown.
CollectiveBandwidth collective_bandwidth(const CollectiveCall& call);

// Communication spans of a timeline as calls: kind from the span name, bytes from Span::bytes
// (taken as nccl-tests S), `group_size` for every call (a timeline does not record communicators).
std::vector<CollectiveCall> collectives_from_timeline(const Timeline& timeline, std::int32_t group_size,
                                                      const KernelClassifier& classifier = KernelClassifier());

struct CollectiveSummary {
  CollectiveKind kind = CollectiveKind::unknown;
  std::int32_t group_size = 0;
  std::int64_t count = 0;
  double bytes = 0;              // sum of S
  std::int64_t duration_ns = 0;  // sum of durations
  // Bandwidths of the totals (sum S / sum t), so long calls weigh more than short ones.
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

// Totals per (kind, group size), largest total duration first.
std::vector<CollectiveSummary> summarize_collectives(const std::vector<CollectiveCall>& calls);

// Bytes of one element of a PyTorch dtype name as written in Kineto args ("Float", "BFloat16",
// "Half", "Float8_e4m3fn", "Long", ...); 0 when unknown.
int dtype_size_bytes(std::string_view dtype);

}  // namespace plansight::estimator
