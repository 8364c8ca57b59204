// Interval union, length, intersection and difference by sorted sweeps.
#include "plansight/estimator/interval_set.h"

#include <algorithm>

namespace plansight::estimator {

std::vector<Interval> merge_intervals(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end_ns <= i.begin_ns; });
  // By start. A timeline's spans come track by track, each in time order, so the list is a few
  // runs already in order: those are merged, pairwise in place, in O(n log runs); a list of many
  // runs is sorted. (Sorting them was a third of rank_breakdown() for the default plan's predicted
  // timeline: bench/results/time-core-cpu.txt.)
  const auto by_start = [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; };
  constexpr std::size_t kMergedRuns = 16;
  const auto first_out_of_order = std::is_sorted_until(intervals.begin(), intervals.end(), by_start);
  std::vector<std::size_t> runs;  // none allocated for a list in order (the simulator's)
  if (first_out_of_order != intervals.end()) {
    runs = {0, static_cast<std::size_t>(first_out_of_order - intervals.begin())};
    for (std::size_t i = runs.back() + 1; i < intervals.size() && runs.size() <= kMergedRuns; ++i) {
      if (intervals[i].begin_ns < intervals[i - 1].begin_ns) runs.push_back(i);
    }
  }
  if (runs.size() > kMergedRuns) {
    std::sort(intervals.begin(), intervals.end(), by_start);
  } else if (!runs.empty()) {
    runs.push_back(intervals.size());  // the runs' bounds: run k is [runs[k], runs[k + 1])
    const auto at = [&](std::size_t k) { return intervals.begin() + static_cast<std::ptrdiff_t>(runs[k]); };
    std::vector<std::size_t> next;
    while (runs.size() > 2) {
      next.clear();
      std::size_t j = 0;
      for (; j + 2 < runs.size(); j += 2) {
        std::inplace_merge(at(j), at(j + 1), at(j + 2), by_start);
        next.push_back(runs[j]);
      }
      if (j + 1 < runs.size()) next.push_back(runs[j]);  // a last run left alone this pass
      next.push_back(runs.back());
      runs.swap(next);
    }
  }
  // Joined in place: the caller's buffer comes back (the simulator merges each rank's collectives
  // once per run, and keeps the buffer for its next run).
  std::size_t kept = 0;
  for (const Interval& i : intervals) {
    if (kept > 0 && i.begin_ns <= intervals[kept - 1].end_ns) {
      intervals[kept - 1].end_ns = std::max(intervals[kept - 1].end_ns, i.end_ns);
    } else {
      intervals[kept++] = i;
    }
  }
  intervals.resize(kept);
  return intervals;
}

std::int64_t total_length(const std::vector<Interval>& merged) {
  std::int64_t sum = 0;
  for (const auto& i : merged) sum += i.length_ns();
  return sum;
}

std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t sum = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].begin_ns, b[j].begin_ns);
    const std::int64_t hi = std::min(a[i].end_ns, b[j].end_ns);
    if (hi > lo) sum += hi - lo;
    if (a[i].end_ns < b[j].end_ns) ++i;
    else ++j;
  }
  return sum;
}

std::vector<Interval> subtract(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  std::size_t j = 0;
  for (const auto& i : a) {
    std::int64_t cursor = i.begin_ns;
    while (j < b.size() && b[j].end_ns <= cursor) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].begin_ns < i.end_ns) {
      if (b[k].begin_ns > cursor) out.push_back({cursor, b[k].begin_ns});
      cursor = std::max(cursor, b[k].end_ns);
      ++k;
    }
    if (cursor < i.end_ns) out.push_back({cursor, i.end_ns});
  }
  return out;
}

std::vector<Interval> clip(const std::vector<Interval>& a, std::int64_t begin_ns, std::int64_t end_ns) {
  std::vector<Interval> out;
  for (const auto& i : a) {
    const std::int64_t lo = std::max(i.begin_ns, begin_ns);
    const std::int64_t hi = std::min(i.end_ns, end_ns);
    if (hi > lo) out.push_back({lo, hi});
  }
  return out;
}

}  // namespace plansight::estimator
