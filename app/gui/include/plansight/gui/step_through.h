// Step-through of a timeline for teaching: events are revealed one at a time in start order
// (ties: display order of tracks, then position in the track), so a class watches 1F1B fill,
// steady state and drain. Because every track's spans are sorted by start, the first k events
// are a prefix of every track, and step k is just one count per track.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plansight/gui/timeline_index.h"

namespace plansight::gui {

class StepThrough {
 public:
  // Timelines above this many spans are not stepped (a class does not click a million times).
  static constexpr std::size_t kMaxEvents = 200'000;

  StepThrough() = default;
  explicit StepThrough(const TimelineIndex& index);

  bool available() const { return !order_.empty(); }
  std::size_t size() const { return order_.size(); }
  std::size_t step() const { return step_; }
  // Reveals the first k events (clamped to size()).
  void set_step(std::size_t k);
  // Per track: how many of its spans the first step() events include.
  const std::vector<std::size_t>& revealed() const { return revealed_; }
  // The k-th event (0-based) as (track, span index).
  struct Event {
    std::size_t track = 0;
    std::size_t span = 0;
  };
  Event event(std::size_t k) const { return order_[k]; }
  // Start of the last revealed event; the bubbles drawn stop there. 0 before the first step.
  std::int64_t revealed_until_ns() const { return until_ns_; }

 private:
  const TimelineIndex* index_ = nullptr;
  std::vector<Event> order_;
  std::vector<std::size_t> revealed_;
  std::size_t step_ = 0;
  std::int64_t until_ns_ = 0;
};

}  // namespace plansight::gui
