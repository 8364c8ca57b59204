// The event engine's steady-state snapshot and skip (iteration_engine.h, steady_state.h).
#include <algorithm>

#include "iteration_engine.h"

namespace plansight::estimator {
namespace {

// The number of leading entries of row[0, m) that are known (>= 0). Producers and consumers of a
// chunk run its micro-batches in order (find_steady_period checks it), so the known entries of a
// row are a prefix.
std::int32_t known_prefix(const std::int64_t* row, std::int32_t m) {
  return static_cast<std::int32_t>(std::partition_point(row, row + m, [](std::int64_t t) { return t >= 0; }) - row);
}

}  // namespace

void IterationEngine::take_snapshot(SteadySnapshot& s) const {
  const auto p = static_cast<std::size_t>(t_.p);
  s.rank.clear();
  s.lists.clear();
  s.lane.clear();
  s.lane_at.clear();
  for (std::size_t r = 0; r < p; ++r) {
    s.rank.insert(s.rank.end(), {free_[r], prev_start_[r], busy_[r], activity_[r].clear_gap_ns, collective_end_[r]});
    s.lists.push_back(activity_[r].gaps.size());
    s.lists.push_back(activity_[r].collectives.size());
    s.lane_at.push_back(s.lane.size());
    // Work issued from here on is issued at or after the start of the rank's last op.
    lanes_[r].tail(prev_start_[r], s.lane);
  }
  s.lane_at.push_back(s.lane.size());
  // Per global chunk, the times its consumers have still to read: the inputs of its forwards
  // (chunk 0's are all there from the start and never change), the forward ends and output
  // gradients its backwards need, the backward ends its Ws need.
  s.windows.clear();
  s.values.clear();
  for (std::int32_t g = 0; g < stages_; ++g) {
    const std::size_t at = pair(g, 0);
    const std::int32_t forwards = known_prefix(&f_done_[at], m_);
    const std::int32_t backwards = known_prefix(&b_done_[at], m_);
    const std::int32_t ws = w_done_[static_cast<std::size_t>(g)];
    const std::int32_t arrived = g == 0 ? forwards : known_prefix(&fwd_ready_[at], m_);
    const std::int32_t gradients = known_prefix(&bwd_ready_[at], m_);
    const std::pair<const std::vector<std::int64_t>*, std::pair<std::int32_t, std::int32_t>> windows[kWindows] = {
        {&fwd_ready_, {forwards, arrived}},
        {&f_done_, {backwards, forwards}},
        {&bwd_ready_, {backwards, gradients}},
        {&b_done_, {t_.split_backward ? ws : backwards, backwards}}};
    for (const auto& [array, range] : windows) {
      const std::int32_t count = std::max(range.second - range.first, 0);
      s.windows.push_back(range.first);
      s.windows.push_back(count);
      s.values.insert(s.values.end(), array->begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(range.first)),
                      array->begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(range.first + count)));
    }
  }
  s.w_done = w_done_;
}

std::int64_t IterationEngine::period_ns(const SteadySnapshot& before, const SteadySnapshot& now,
                                        std::int32_t mb_shift) const {
  const std::int64_t ns = now.rank[0] - before.rank[0];
  if (ns <= 0 || now.lane.size() != before.lane.size() || now.values.size() != before.values.size()) return -1;
  for (std::size_t r = 0; r < static_cast<std::size_t>(t_.p); ++r) {
    const std::int64_t* b = &before.rank[r * kRankFields];
    const std::int64_t* n = &now.rank[r * kRankFields];
    if (n[0] - b[0] != ns || n[1] - b[1] != ns) return -1;
    // A rank's collectives matter only while they end after its clock (gap() compares them with
    // the start of its next gaps, which begin at or after the clock).
    const bool past_before = b[4] <= b[0], past_now = n[4] <= n[0];
    if (past_before != past_now || (!past_now && n[4] - b[4] != ns)) return -1;
    if (now.lane_at[r + 1] - now.lane_at[r] != before.lane_at[r + 1] - before.lane_at[r]) return -1;
  }
  for (std::size_t i = 0; i < now.lane.size(); ++i) {
    if (now.lane[i] - before.lane[i] != ns) return -1;
  }
  // Window by window; a forward's end is only ever read as "it has run" (a backward needs its
  // forward), so the f_done_ window compares its extent, not its times.
  std::size_t at = 0;
  for (std::size_t w = 0; w < now.windows.size(); w += 2) {
    const std::int32_t count = now.windows[w + 1];
    if (count != before.windows[w + 1]) return -1;
    if (count > 0 && now.windows[w] - before.windows[w] != mb_shift) return -1;
    if ((w / 2) % kWindows != 1) {
      for (std::size_t i = at; i < at + static_cast<std::size_t>(count); ++i) {
        if (now.values[i] - before.values[i] != ns) return -1;
      }
    }
    at += static_cast<std::size_t>(count);
  }
  return ns;
}

std::int64_t IterationEngine::skip_periods(const SteadySnapshot& before, const SteadySnapshot& now,
                                           const std::vector<std::size_t>& ops, std::int32_t mb_shift,
                                           std::int64_t periods, std::int64_t ns) {
  const std::int64_t shift_ns = periods * ns;
  const auto shift_mb = static_cast<std::int32_t>(periods * mb_shift);
  // Every pending time lands on a micro-batch of this iteration (the skipped periods exist).
  for (std::size_t w = 0; w < now.windows.size(); w += 2) {
    if (now.windows[w + 1] > 0 && now.windows[w] + now.windows[w + 1] + shift_mb > m_) return 0;
  }
  std::int64_t skipped = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(t_.p); ++r) {
    const std::int64_t* b = &before.rank[r * kRankFields];
    const std::int64_t* n = &now.rank[r * kRankFields];
    next_[r] += static_cast<std::size_t>(periods) * ops[r];
    skipped += periods * static_cast<std::int64_t>(ops[r]);
    free_[r] += shift_ns;
    prev_start_[r] += shift_ns;
    busy_[r] += periods * (n[2] - b[2]);
    RankActivity& a = activity_[r];
    a.clear_gap_ns += periods * (n[3] - b[3]);
    if (n[4] > n[0]) collective_end_[r] += shift_ns;
    // The period's gaps and collectives, once more for each skipped period.
    for (auto [list, k] : {std::pair{&a.gaps, 0}, std::pair{&a.collectives, 1}}) {
      const std::size_t from = before.lists[2 * r + static_cast<std::size_t>(k)];
      const std::size_t to = now.lists[2 * r + static_cast<std::size_t>(k)];
      list->reserve(list->size() + static_cast<std::size_t>(periods) * (to - from));
      for (std::int64_t j = 1; j <= periods; ++j) {
        for (std::size_t i = from; i < to; ++i) {
          const Interval x = (*list)[i];
          list->push_back({x.begin_ns + j * ns, x.end_ns + j * ns});
        }
      }
    }
    lanes_[r].shift_tail(n[1], shift_ns);
  }
  // The pending times, moved to the micro-batches they belong to after the skip (from the top:
  // a window may overlap its own destination).
  std::vector<std::int64_t>* arrays[kWindows] = {&fwd_ready_, &f_done_, &bwd_ready_, &b_done_};
  std::size_t w = 0;
  for (std::int32_t g = 0; g < stages_; ++g) {
    for (std::vector<std::int64_t>* array : arrays) {
      const std::int32_t first = now.windows[w], count = now.windows[w + 1];
      w += 2;
      if (g == 0 && array == &fwd_ready_) continue;  // chunk 0's inputs: there from the start
      std::int64_t* row = array->data() + pair(g, 0);
      for (std::int32_t mb = first + count - 1; mb >= first; --mb) row[mb + shift_mb] = row[mb] + shift_ns;
    }
    w_done_[static_cast<std::size_t>(g)] +=
        static_cast<std::int32_t>(periods) * (now.w_done[static_cast<std::size_t>(g)] - before.w_done[static_cast<std::size_t>(g)]);
  }
  skipped_ops_ += skipped;
  return skipped;
}

}  // namespace plansight::estimator
