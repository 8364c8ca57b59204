// Search structures over a Timeline for drawing and hit testing, built once off the GUI thread.
// Spans of a track are sorted by start (Track's invariant); a running maximum of their ends makes
// "the first span that can reach into [t0, t1)" a binary search even where spans overlap, the job
// qt-creator's tracing does with an end-sorted array. Also the idle pipeline gaps (bubbles).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "plansight/estimator/interval_set.h"
#include "plansight/estimator/timeline.h"

namespace plansight::gui {

struct TrackIndex {
  std::vector<std::int64_t> max_end_ns;      // max_end_ns[i] = max end of spans 0..i (non-decreasing)
  bool ends_sorted = true;                   // no span starts before its predecessor ends
  std::vector<estimator::Interval> bubbles;  // compute lanes: idle pipeline time, sorted, disjoint
};

class TimelineIndex {
 public:
  explicit TimelineIndex(estimator::Timeline timeline);

  const estimator::Timeline& timeline() const { return timeline_; }
  const estimator::Track& track(std::size_t t) const { return timeline_.tracks[t]; }
  std::size_t track_count() const { return timeline_.tracks.size(); }
  std::size_t span_count() const { return span_count_; }
  const TrackIndex& track_index(std::size_t t) const { return index_[t]; }
  // Tracks in display order: by rank, then lane (compute, communication, copy, host), then stream.
  const std::vector<std::size_t>& display_order() const { return order_; }
  std::int64_t begin_ns() const { return begin_ns_; }
  std::int64_t end_ns() const { return end_ns_; }

  // [first, last) of track t's spans that may intersect [begin_ns, end_ns): every span that
  // intersects lies inside; inside, only spans overlapping a longer earlier one may not.
  std::pair<std::size_t, std::size_t> visible(std::size_t t, std::int64_t begin_ns, std::int64_t end_ns) const;
  // The shortest span of track t covering [t_ns - tolerance_ns, t_ns + tolerance_ns] at any
  // point, the one nearest to t_ns among equals; -1 when none.
  std::ptrdiff_t span_at(std::size_t t, std::int64_t t_ns, std::int64_t tolerance_ns) const;
  // [first, last) of track t's bubbles intersecting [begin_ns, end_ns).
  std::pair<std::size_t, std::size_t> visible_bubbles(std::size_t t, std::int64_t begin_ns, std::int64_t end_ns) const;

 private:
  void build_bubbles();

  estimator::Timeline timeline_;
  std::vector<TrackIndex> index_;
  std::vector<std::size_t> order_;
  std::size_t span_count_ = 0;
  std::int64_t begin_ns_ = 0;
  std::int64_t end_ns_ = 1;
};

}  // namespace plansight::gui
