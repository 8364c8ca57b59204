// Per-phase and per-kernel-class sums of two timelines and their differences.
#include "plansight/estimator/timeline_diff.h"

#include <array>
#include <limits>
#include <set>

#include "plansight/estimator/hta_metrics.h"
#include "plansight/estimator/timeline_metrics.h"

namespace plansight::estimator {
namespace {

constexpr int kPhases = static_cast<int>(Phase::communication) + 1;
constexpr int kClasses = static_cast<int>(KernelClass::memory) + 1;

struct Sums {
  std::array<std::int64_t, kPhases> phase{};
  std::array<std::int64_t, kClasses> cls{};
  std::int32_t ranks = 0;
};

Sums sums_of(const Timeline& t, const KernelClassifier& classifier) {
  Sums s;
  const auto classes = classify_names(t, classifier);
  std::set<std::int32_t> ranks;
  for (const auto& track : t.tracks) {
    ranks.insert(track.rank);
    for (const auto& span : track.spans) {
      if (!is_gpu_event(track, span)) continue;
      s.phase[static_cast<std::size_t>(span.phase)] += span.duration_ns;
      s.cls[static_cast<std::size_t>(span_class(span, classes))] += span.duration_ns;
    }
  }
  s.ranks = static_cast<std::int32_t>(ranks.size());
  return s;
}

DiffRow row(std::string key, std::int64_t a, std::int64_t b) {
  return {std::move(key), a, b, b - a, a != 0 ? double(b) / double(a) : std::numeric_limits<double>::quiet_NaN()};
}

}  // namespace

TimelineDiff diff_timelines(const Timeline& a, const Timeline& b, const KernelClassifier& classifier) {
  const Sums sa = sums_of(a, classifier), sb = sums_of(b, classifier);
  TimelineDiff d;
  d.makespan = row("makespan", a.end_ns() - a.begin_ns(), b.end_ns() - b.begin_ns());
  d.a_ranks = sa.ranks;
  d.b_ranks = sb.ranks;
  for (int p = 0; p < kPhases; ++p) {
    d.by_phase.push_back(row(std::string(to_string(static_cast<Phase>(p))), sa.phase[p], sb.phase[p]));
  }
  for (int c = 0; c < kClasses; ++c) {
    d.by_kernel_class.push_back(row(std::string(to_string(static_cast<KernelClass>(c))), sa.cls[c], sb.cls[c]));
  }
  return d;
}

}  // namespace plansight::estimator
