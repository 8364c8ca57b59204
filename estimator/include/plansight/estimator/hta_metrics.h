// Holistic Trace Analysis (facebookresearch/HolisticTraceAnalysis, HEAD f4d0062, May 2026)
// definitions, reproduced on a Timeline so our numbers can be checked against HTA's:
//   kernel type        hta/common/types.py CommunicateKernelGroupingPattern, MemoryKernelGroupingPattern,
//                      ComputeKernelGroupingPattern; hta/utils/utils.py get_kernel_type
//   temporal breakdown hta/analyzers/breakdown_analysis.py get_temporal_breakdown (+ _get_idle_time_for_kernels)
//   comm/comp overlap  hta/analyzers/communication_analysis.py get_comm_comp_overlap
// HTA's input set is every event with a GPU stream (kernels, memcpy, memset); gpu_user_annotation
// is dropped by its default parser config, so annotation spans are ignored here too.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

enum class HtaKernelType : std::uint8_t { communication, memory, computation, other };

// Case-sensitive, prefix-anchored like Python's re.match in HTA.
HtaKernelType hta_kernel_type(std::string_view kernel_name);

struct HtaOptions {
  // HTA's round_down_time_stamps: for traces whose ts are floats (ns resolution) it moves each
  // start up and each end down to whole microseconds before any analysis. Off by default; turn it
  // on for traces with fractional timestamps (RankInfo::fractional_timestamps) to match HTA.
  // Spans that become empty are dropped (HTA would keep them with a negative duration).
  bool round_to_whole_us = false;
};

struct HtaTemporalBreakdown {
  std::int32_t rank = 0;
  std::int64_t idle_ns = 0;         // kernel_ns - merged time of all GPU events
  std::int64_t compute_ns = 0;      // merged time of COMPUTATION kernels
  std::int64_t non_compute_ns = 0;  // kernel_ns - compute_ns - idle_ns
  std::int64_t kernel_ns = 0;       // end of the last GPU event - start of the first
  double idle_fraction() const { return kernel_ns > 0 ? double(idle_ns) / double(kernel_ns) : 0.0; }
  double compute_fraction() const { return kernel_ns > 0 ? double(compute_ns) / double(kernel_ns) : 0.0; }
  double non_compute_fraction() const { return kernel_ns > 0 ? double(non_compute_ns) / double(kernel_ns) : 0.0; }
};

struct HtaOverlap {
  std::int32_t rank = 0;
  std::int64_t overlap_ns = 0;        // merged communication ∩ merged computation
  std::int64_t communication_ns = 0;  // merged communication
  double ratio = 0;                   // overlap_ns / communication_ns; NaN without communication (as HTA)
};

// One row per rank present in the timeline, ascending.
std::vector<HtaTemporalBreakdown> hta_temporal_breakdown(const Timeline& timeline, const HtaOptions& options = {});
std::vector<HtaOverlap> hta_comm_comp_overlap(const Timeline& timeline, const HtaOptions& options = {});

// True for the spans HTA analyses: device work (kernel, collective, send, recv, memcpy, memset)
// on a device lane. Host spans, annotations and idle markers are not GPU events.
bool is_gpu_event(const Track& track, const Span& span);

}  // namespace plansight::estimator
