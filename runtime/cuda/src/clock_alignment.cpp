// align_clocks and clock_drift_ppm (clock_alignment.h).
#include "plansight/runtime/cuda/clock_alignment.h"

#include <string>

namespace plansight::runtime::cuda {

Result<ClockAlignment> align_clocks(const std::vector<ClockSample>& samples) {
  if (samples.empty()) return make_error("clock_alignment", "no samples; valid: at least one");
  const ClockSample* best = nullptr;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const ClockSample& s = samples[i];
    if (s.cpu_after_ns < s.cpu_before_ns) {
      return make_error("clock_alignment.samples[" + std::to_string(i) + "]",
                        "window runs backwards: cpu_before " + std::to_string(s.cpu_before_ns) + " ns, cpu_after " +
                            std::to_string(s.cpu_after_ns) + " ns; valid: cpu_after >= cpu_before");
    }
    if (best == nullptr || s.cpu_after_ns - s.cpu_before_ns < best->cpu_after_ns - best->cpu_before_ns) best = &s;
  }
  const std::int64_t width = best->cpu_after_ns - best->cpu_before_ns;
  const std::int64_t midpoint = best->cpu_before_ns + width / 2;
  return ClockAlignment{midpoint - best->other_ns, (width + 1) / 2};
}

Result<double> clock_drift_ppm(const ClockAlignment& first, std::int64_t first_cpu_ns, const ClockAlignment& second,
                               std::int64_t second_cpu_ns) {
  if (second_cpu_ns == first_cpu_ns) {
    return make_error("clock_alignment", "both alignments at CPU time " + std::to_string(first_cpu_ns) +
                                             " ns; valid: two different times");
  }
  const double offset_change = static_cast<double>(second.offset_ns - first.offset_ns);
  return offset_change / static_cast<double>(second_cpu_ns - first_cpu_ns) * 1e6;
}

}  // namespace plansight::runtime::cuda
