// What an importer returns: the Timeline (source = imported), the collective calls with the
// metadata a Timeline does not hold (communicator size, dtype, process group), and per-rank facts
// about where the data came from and how its clock was read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/collective_bandwidth.h"
#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"

namespace plansight::interop {

enum class TimeBase : std::uint8_t {
  epoch,          // absolute Unix-epoch time (ts already absolute, or base + ts)
  relative        // relative to an unknown origin (no base time in the file)
};

struct RankInfo {
  std::int32_t rank = 0;
  std::int32_t world_size = 0;      // 0 when the file does not say
  std::string source;               // file the rank came from
  std::string device_name;          // e.g. "NVIDIA H100 80GB HBM3"; empty when unknown
  TimeBase time_base = TimeBase::relative;
  std::int64_t base_time_ns = 0;    // Kineto baseTimeNanoseconds / nsys session start, 0 if none
  bool fractional_timestamps = false;  // some ts had a fraction (HTA rounds such traces)
  std::int64_t events_read = 0;     // trace events / table rows seen
  std::int64_t spans_kept = 0;
};

struct ImportedTrace {
  estimator::Timeline timeline;
  std::vector<estimator::CollectiveCall> collectives;
  std::vector<RankInfo> ranks;           // ascending by rank
  std::vector<Diagnostic> warnings;      // things that were skipped or guessed
};

}  // namespace plansight::interop
