// HTA's kernel typing, temporal breakdown and communication/computation overlap on a Timeline.
// Implemented from the definitions in HTA's sources (see the header), with interval sweeps
// instead of DataFrames: merged intervals and exact intersection give the same sums as HTA's
// cumulative-status trick (running status 3 = communication and computation both active).
#include "plansight/estimator/hta_metrics.h"

#include <cmath>
#include <limits>
#include <map>

#include "plansight/estimator/interval_set.h"

namespace plansight::estimator {
namespace {

bool starts(std::string_view s, std::string_view p) { return s.starts_with(p); }
bool has(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// re.match("cuda.*LaunchKernel", name): starts with "cuda" and has "LaunchKernel" after it.
bool cuda_launch_kernel(std::string_view s) { return starts(s, "cuda") && s.find("LaunchKernel", 4) != std::string_view::npos; }

// ComputeKernelGroupingPattern is an inverse match of these alternatives.
bool excluded_from_compute(std::string_view s) {
  return starts(s, "nccl") || has(s, "Memcpy") || has(s, "Memset") || has(s, "dma") || has(s, "Sync") ||
         starts(s, "Stream Wait Event") || cuda_launch_kernel(s) || starts(s, "runFunction") || starts(s, "hip") ||
         starts(s, "job_exe") || starts(s, "packet") || starts(s, "pe_exe") || starts(s, "cpum_exe_subgraph") ||
         starts(s, "hccl") || starts(s, "collective_subgraph_execution");
}

std::int64_t ceil_us(std::int64_t ns) {
  const std::int64_t q = ns / 1000, r = ns % 1000;
  return (r > 0 ? q + 1 : q) * 1000;
}
std::int64_t floor_us(std::int64_t ns) {
  const std::int64_t q = ns / 1000, r = ns % 1000;
  return (r < 0 ? q - 1 : q) * 1000;
}

struct RankSets {
  std::vector<Interval> all, communication, computation;
};

std::map<std::int32_t, RankSets> collect(const Timeline& timeline, const HtaOptions& options) {
  std::map<std::int32_t, RankSets> ranks;
  std::vector<HtaKernelType> type_of_name(timeline.names.size());
  for (std::size_t i = 0; i < timeline.names.size(); ++i) type_of_name[i] = hta_kernel_type(timeline.names[i]);
  for (const auto& track : timeline.tracks) {
    auto& sets = ranks[track.rank];
    for (const auto& span : track.spans) {
      if (!is_gpu_event(track, span)) continue;
      Interval iv{span.start_ns, span.end_ns()};
      if (options.round_to_whole_us) iv = {ceil_us(iv.begin_ns), floor_us(iv.end_ns)};
      if (iv.end_ns < iv.begin_ns) continue;
      const HtaKernelType type = span.name_id >= 0 && static_cast<std::size_t>(span.name_id) < type_of_name.size()
                                     ? type_of_name[static_cast<std::size_t>(span.name_id)]
                                     : hta_kernel_type("");
      sets.all.push_back(iv);
      if (type == HtaKernelType::communication) sets.communication.push_back(iv);
      if (type == HtaKernelType::computation) sets.computation.push_back(iv);
    }
  }
  return ranks;
}

}  // namespace

HtaKernelType hta_kernel_type(std::string_view s) {
  if (starts(s, "nccl") || starts(s, "hip") || starts(s, "hccl") || has(s, "ncclKernel")) {
    return HtaKernelType::communication;
  }
  if (starts(s, "Memcpy") || starts(s, "hipMemcpy") || starts(s, "Memset") || starts(s, "hipMemset") || starts(s, "dma")) {
    return HtaKernelType::memory;
  }
  if (!excluded_from_compute(s)) return HtaKernelType::computation;
  return HtaKernelType::other;
}

bool is_gpu_event(const Track& track, const Span& span) {
  if (track.lane == Lane::host) return false;
  switch (span.kind) {
    case SpanKind::kernel:
    case SpanKind::collective:
    case SpanKind::send:
    case SpanKind::recv:
    case SpanKind::memcpy:
    case SpanKind::memset: return true;
    default: return false;
  }
}

std::vector<HtaTemporalBreakdown> hta_temporal_breakdown(const Timeline& timeline, const HtaOptions& options) {
  std::vector<HtaTemporalBreakdown> out;
  for (auto& [rank, sets] : collect(timeline, options)) {
    HtaTemporalBreakdown row;
    row.rank = rank;
    const auto all = merge_intervals(std::move(sets.all));
    if (!all.empty()) {
      row.kernel_ns = all.back().end_ns - all.front().begin_ns;
      row.idle_ns = row.kernel_ns - total_length(all);
      row.compute_ns = total_length(merge_intervals(std::move(sets.computation)));
      row.non_compute_ns = row.kernel_ns - row.compute_ns - row.idle_ns;
    }
    out.push_back(row);
  }
  return out;
}

std::vector<HtaOverlap> hta_comm_comp_overlap(const Timeline& timeline, const HtaOptions& options) {
  std::vector<HtaOverlap> out;
  for (auto& [rank, sets] : collect(timeline, options)) {
    HtaOverlap row;
    row.rank = rank;
    const auto comm = merge_intervals(std::move(sets.communication));
    const auto comp = merge_intervals(std::move(sets.computation));
    row.communication_ns = total_length(comm);
    row.overlap_ns = intersection_length(comm, comp);
    row.ratio = row.communication_ns > 0 ? double(row.overlap_ns) / double(row.communication_ns)
                                         : std::numeric_limits<double>::quiet_NaN();
    out.push_back(row);
  }
  return out;
}

}  // namespace plansight::estimator
