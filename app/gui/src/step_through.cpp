// Step-through order and per-track prefixes (see step_through.h).
#include "plansight/gui/step_through.h"

#include <algorithm>

namespace plansight::gui {

StepThrough::StepThrough(const TimelineIndex& index) : index_(&index) {
  revealed_.assign(index.track_count(), 0);
  if (index.span_count() == 0 || index.span_count() > kMaxEvents) return;
  std::vector<std::size_t> rank_of_track(index.track_count());
  for (std::size_t pos = 0; pos < index.display_order().size(); ++pos) rank_of_track[index.display_order()[pos]] = pos;
  order_.reserve(index.span_count());
  for (std::size_t t = 0; t < index.track_count(); ++t) {
    for (std::size_t i = 0; i < index.track(t).spans.size(); ++i) order_.push_back({t, i});
  }
  std::sort(order_.begin(), order_.end(), [&](const Event& a, const Event& b) {
    const auto sa = index.track(a.track).spans[a.span].start_ns;
    const auto sb = index.track(b.track).spans[b.span].start_ns;
    if (sa != sb) return sa < sb;
    if (a.track != b.track) return rank_of_track[a.track] < rank_of_track[b.track];
    return a.span < b.span;
  });
}

void StepThrough::set_step(std::size_t k) {
  k = std::min(k, order_.size());
  // Move the per-track prefixes from the current step to k, one event at a time either way.
  while (step_ < k) ++revealed_[order_[step_++].track];
  while (step_ > k) --revealed_[order_[--step_].track];
  until_ns_ = step_ == 0 ? (index_ ? index_->begin_ns() : 0)
                         : index_->track(order_[step_ - 1].track).spans[order_[step_ - 1].span].start_ns;
}

}  // namespace plansight::gui
