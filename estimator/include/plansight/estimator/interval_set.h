// Half-open time intervals [begin_ns, end_ns) and the three operations timeline metrics are made
// of: merge (union), total length, and intersection length. Merging joins touching intervals, as
// HTA's merge_kernel_intervals does (a group continues while ts <= running max of end).
#pragma once

#include <cstdint>
#include <vector>

namespace plansight::estimator {

struct Interval {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t length_ns() const { return end_ns - begin_ns; }
};

// Union of `intervals` as sorted, disjoint, non-touching intervals; empty and inverted ones dropped.
std::vector<Interval> merge_intervals(std::vector<Interval> intervals);

// Sum of lengths; `merged` must come from merge_intervals.
std::int64_t total_length(const std::vector<Interval>& merged);

// Length of the intersection of two merged sets (linear sweep).
std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Parts of merged `a` not covered by merged `b`.
std::vector<Interval> subtract(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Parts of merged `a` inside [begin_ns, end_ns).
std::vector<Interval> clip(const std::vector<Interval>& a, std::int64_t begin_ns, std::int64_t end_ns);

}  // namespace plansight::estimator
