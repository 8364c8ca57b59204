// Aligning a device tracer's clock (CUPTI's timestamps) with the CPU tracer's (steady_clock since
// its origin). Each sample reads the CPU clock, the other clock, and the CPU clock again; the
// other clock's reading happened somewhere inside that window, so the offset is taken at the
// window's midpoint and is uncertain by half its width. Of several samples the narrowest window
// wins (Cristian 1989, "Probabilistic clock synchronization", the minimum round-trip rule).
// Two groups of samples taken apart also give the drift between the clocks.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

struct ClockSample {
  std::int64_t cpu_before_ns = 0;
  std::int64_t other_ns = 0;
  std::int64_t cpu_after_ns = 0;
};

struct ClockAlignment {
  std::int64_t offset_ns = 0;       // cpu = other + offset_ns
  std::int64_t uncertainty_ns = 0;  // half the narrowest window
  std::int64_t to_cpu_ns(std::int64_t other_ns) const { return other_ns + offset_ns; }
};

// The alignment from the sample with the narrowest window. Errors: no samples, or a sample
// whose window runs backwards (cpu_after < cpu_before).
Result<ClockAlignment> align_clocks(const std::vector<ClockSample>& samples);

// Drift of the other clock against the CPU clock in parts per million, from alignments taken at
// two CPU times (positive: the other clock runs slow, the offset grows). Error when the two were
// taken at the same CPU time.
Result<double> clock_drift_ppm(const ClockAlignment& first, std::int64_t first_cpu_ns, const ClockAlignment& second,
                               std::int64_t second_cpu_ns);

}  // namespace plansight::runtime::cuda
