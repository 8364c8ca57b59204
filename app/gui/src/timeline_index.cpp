// Per-track running max of span ends, display order and pipeline bubbles (see timeline_index.h).
#include "plansight/gui/timeline_index.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "plansight/estimator/schedule_metrics.h"

namespace plansight::gui {

namespace est = plansight::estimator;

TimelineIndex::TimelineIndex(est::Timeline timeline) : timeline_(std::move(timeline)) {
  const auto by_start = [](const est::Span& a, const est::Span& b) { return a.start_ns < b.start_ns; };
  bool any = false;
  begin_ns_ = std::numeric_limits<std::int64_t>::max();
  end_ns_ = std::numeric_limits<std::int64_t>::min();
  index_.resize(timeline_.tracks.size());
  for (std::size_t t = 0; t < timeline_.tracks.size(); ++t) {
    auto& spans = timeline_.tracks[t].spans;
    if (!std::is_sorted(spans.begin(), spans.end(), by_start)) std::stable_sort(spans.begin(), spans.end(), by_start);
    TrackIndex& ix = index_[t];
    ix.max_end_ns.resize(spans.size());
    std::int64_t running = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (spans[i].start_ns < running) ix.ends_sorted = false;
      running = std::max(running, spans[i].end_ns());
      ix.max_end_ns[i] = running;
    }
    span_count_ += spans.size();
    if (!spans.empty()) {
      any = true;
      begin_ns_ = std::min(begin_ns_, spans.front().start_ns);
      end_ns_ = std::max(end_ns_, running);
    }
  }
  if (!any) begin_ns_ = 0, end_ns_ = 1;
  if (end_ns_ <= begin_ns_) end_ns_ = begin_ns_ + 1;

  order_.resize(timeline_.tracks.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = timeline_.tracks[a];
    const auto& y = timeline_.tracks[b];
    if (x.rank != y.rank) return x.rank < y.rank;
    if (x.lane != y.lane) return x.lane < y.lane;
    return x.stream < y.stream;
  });
  build_bubbles();
}

// Bubbles where schedule_metrics.h's one definition puts them (bubble_intervals(), whose lengths
// are the figures the page shows), drawn on each rank's first compute track.
void TimelineIndex::build_bubbles() {
  for (auto& rank : est::bubble_intervals(timeline_)) {
    for (std::size_t t : order_) {
      if (timeline_.tracks[t].rank == rank.rank && timeline_.tracks[t].lane == est::Lane::compute) {
        index_[t].bubbles = std::move(rank.intervals);
        break;
      }
    }
  }
}

std::pair<std::size_t, std::size_t> TimelineIndex::visible(std::size_t t, std::int64_t begin_ns,
                                                           std::int64_t end_ns) const {
  const auto& spans = timeline_.tracks[t].spans;
  const auto& max_end = index_[t].max_end_ns;
  // Spans before `first` all end at or before begin_ns; spans from `last` on start at or after end_ns.
  const auto first =
      static_cast<std::size_t>(std::upper_bound(max_end.begin(), max_end.end(), begin_ns) - max_end.begin());
  const auto last =
      static_cast<std::size_t>(std::lower_bound(spans.begin(), spans.end(), end_ns,
                                                [](const est::Span& s, std::int64_t v) { return s.start_ns < v; }) -
                               spans.begin());
  return {first, std::max(first, last)};
}

std::ptrdiff_t TimelineIndex::span_at(std::size_t t, std::int64_t t_ns, std::int64_t tolerance_ns) const {
  const std::int64_t lo = t_ns - tolerance_ns;
  const std::int64_t hi = t_ns + tolerance_ns + 1;
  const auto [first, last] = visible(t, lo, hi);
  const auto& spans = timeline_.tracks[t].spans;
  std::ptrdiff_t best = -1;
  std::int64_t best_distance = 0;
  for (std::size_t i = first; i < last; ++i) {
    const est::Span& s = spans[i];
    if (s.end_ns() < lo || s.start_ns >= hi) continue;
    const std::int64_t distance = t_ns < s.start_ns ? s.start_ns - t_ns : (t_ns >= s.end_ns() ? t_ns - s.end_ns() : 0);
    const bool better =
        best < 0 || distance < best_distance ||
        (distance == best_distance && s.duration_ns < spans[static_cast<std::size_t>(best)].duration_ns);
    if (better) {
      best = static_cast<std::ptrdiff_t>(i);
      best_distance = distance;
    }
  }
  return best;
}

std::pair<std::size_t, std::size_t> TimelineIndex::visible_bubbles(std::size_t t, std::int64_t begin_ns,
                                                                   std::int64_t end_ns) const {
  const auto& b = index_[t].bubbles;
  const auto first =
      static_cast<std::size_t>(std::upper_bound(b.begin(), b.end(), begin_ns,
                                                [](std::int64_t v, const est::Interval& i) { return v < i.end_ns; }) -
                               b.begin());
  const auto last =
      static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), end_ns,
                                                [](const est::Interval& i, std::int64_t v) { return i.begin_ns < v; }) -
                               b.begin());
  return {first, std::max(first, last)};
}

}  // namespace plansight::gui
