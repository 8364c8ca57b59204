// Export of timelines as Chrome trace-event JSON (the "JSON Object Format" of the Trace Event
// Format document), which Perfetto UI and chrome://tracing open. One process per rank, named and
// sorted ("rank 3"); one named thread per track and timeline, so predicted and measured runs lie
// on separate tracks of the same rank; complete events ("ph":"X") for spans; flow arrows only
// for pipeline send -> recv pairs, where they show which stage waits on which.
// A thread never holds partially overlapping slices (the format requires proper nesting):
// spans that would overlap partially move to a numbered overflow thread of the same track.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"

namespace plansight::interop {

enum class TimeOrigin : std::uint8_t {
  per_timeline,  // each timeline starts at 0, so a prediction and a measurement line up
  common,        // one origin: the earliest span of all timelines
  absolute       // as stored (epoch ns become µs near 1.7e15; readers lose sub-µs precision)
};

struct ChromeTraceOptions {
  TimeOrigin origin = TimeOrigin::per_timeline;
  bool flows = true;
};

void write_chrome_trace(std::ostream& out, const std::vector<const estimator::Timeline*>& timelines,
                        const ChromeTraceOptions& options = {});
std::string chrome_trace_json(const std::vector<const estimator::Timeline*>& timelines,
                              const ChromeTraceOptions& options = {});
// Writes to a file; returns the number of bytes written.
Result<std::int64_t> write_chrome_trace_file(const std::filesystem::path& path,
                                             const std::vector<const estimator::Timeline*>& timelines,
                                             const ChromeTraceOptions& options = {});

}  // namespace plansight::interop
