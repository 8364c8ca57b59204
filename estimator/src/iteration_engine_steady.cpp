// The event engine's steady-state snapshot and skip (iteration_engine.h, steady_state.h).
#include <algorithm>
#include <array>
#include <climits>

#include "iteration_engine.h"

namespace plansight::estimator {
namespace {

// FNV-1a over 64-bit words (Fowler, Noll, Vo), then a final avalanche (the murmur3 finaliser).
struct Hash {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(std::int64_t x) { h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001b3ull; }
  std::uint64_t done() const {
    std::uint64_t x = h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
  }
};

}  // namespace

// A last chunk's losses (window 1: the ends of its own forwards) are read only by its backwards,
// and every chunk's backward ends (window 2) only by its Ws, which run on the same rank after
// the op that wrote them (check_schedule: a B after its F, a W after its B): when read, that op
// has run and its end is before the rank's clock, so it never decides when an op starts. These
// marks are no part of the state a period repeats (GPipe's forward half piles up losses a
// backward reads only after it; ZB-H1's deferred Ws read backward ends written up to p periods
// before, at the pace their rank had then); a skip marks the ops it moves over as run.
bool IterationEngine::marks_only(std::int32_t g, std::size_t which) const {
  return (which == kBwdReady && (g + 1 == stages_ || g + 1 == second_start_)) || (which == kBDone && t_.split_backward);
}

std::pair<OpKind, OpKind> IterationEngine::marks_kinds(std::size_t which) {
  return which == kBDone ? std::pair{OpKind::backward, OpKind::weight_grad} : std::pair{OpKind::forward, OpKind::backward};
}

std::int32_t IterationEngine::pipeline_first(std::int32_t g) const {
  return second_start_ >= 0 && g >= second_start_ ? m_ / 2 : 0;
}

void IterationEngine::take_snapshot(SteadySnapshot& s) {
  const auto p = static_cast<std::size_t>(t_.p);
  // The ops run per chunk and kind (ran_, counted as they run). Every (rank, chunk, kind) runs its
  // micro-batches in order (find_steady_period), so what ran is 0 .. ran-1.
  s.cut.assign(next_.begin(), next_.end());
  s.ran = ran_;
  // Sized once and written in place (a search takes one snapshot a cut: hundreds a run).
  s.rank.resize(p * kRankFields);
  s.lists.resize(2 * p + 2);  // and the first rank's idle stretches and sends (first_idle_)
  s.lane_at.resize(p + 1);
  s.lane.clear();
  std::int64_t* x = s.rank.data();
  for (std::size_t r = 0; r < p; ++r, x += kRankFields) {
    const RankActivity& a = activity_[r];
    x[0] = free_[r], x[1] = prev_start_[r], x[2] = busy_[r], x[3] = a.clear_gap_ns, x[4] = collective_end_[r];
    s.lists[2 * r] = a.gaps.size();
    s.lists[2 * r + 1] = a.collectives.size();
    s.lane_at[r] = s.lane.size();
    // Work issued from here on is issued at or after the start of the rank's last op.
    lanes_[r].tail(prev_start_[r], s.lane);
  }
  s.lists[2 * p] = first_idle_.size();
  s.lists[2 * p + 1] = first_sends_.size();
  s.lane_at[p] = s.lane.size();
  s.windows_set = false;  // fill_windows(), for the snapshots that are compared
}

void IterationEngine::prepare_windows() {
  plain_windows_.clear();
  marks_windows_.clear();
  constexpr auto kF = static_cast<std::uint32_t>(OpKind::forward), kB = static_cast<std::uint32_t>(OpKind::backward),
                 kW = static_cast<std::uint32_t>(OpKind::weight_grad);
  const auto at = [](std::int32_t chunk, std::uint32_t kind) { return static_cast<std::uint32_t>(chunk) * 3 + kind; };
  for (std::int32_t g = 0; g < stages_; ++g) {
    // Counts are micro-batches of the chunk's pipeline, which starts at micro-batch m/2 for
    // DualPipe's second (two_pipelines); windows are in micro-batch indices.
    const bool starts = g == 0 || g == second_start_, ends = g + 1 == stages_ || g + 1 == second_start_;
    for (std::size_t which = 0; which < kPending; ++which) {
      WindowSpec w;
      w.k = static_cast<std::uint32_t>(static_cast<std::size_t>(g) * kPending + which);
      w.which = static_cast<std::uint32_t>(which);
      w.g = g;
      w.producer = producer_rank(g, which);
      w.first_mb = pipeline_first(g);
      if (which == kFwdReady) {
        if (starts) continue;  // a first chunk's inputs are there at t = 0
        w.lo = at(g, kF), w.hi = at(g - 1, kF);
      } else if (which == kBwdReady) {
        w.lo = at(g, kB), w.hi = ends ? at(g, kF) : at(g + 1, kB);  // a last chunk: its loss
      } else {
        if (!t_.split_backward) continue;  // no Ws read the backwards' ends
        w.lo = at(g, kW), w.hi = at(g, kB);
      }
      if (marks_only(g, which)) {
        const auto [writes, reads] = marks_kinds(which);
        w.writers = at(g, static_cast<std::uint32_t>(writes));
        w.readers = at(g, static_cast<std::uint32_t>(reads));
        marks_windows_.push_back(w);
      } else {
        plain_windows_.push_back(w);
      }
    }
  }
}

void IterationEngine::fill_windows(SteadySnapshot& s) const {
  if (s.windows_set) return;
  s.windows_set = true;
  s.windows.resize(static_cast<std::size_t>(stages_) * kPending);
  const std::int32_t* ran = s.ran.data();
  Window* out = s.windows.data();
  for (const auto* list : {&plain_windows_, &marks_windows_}) {
    for (const WindowSpec& w : *list) {
      const std::int32_t first = ran[w.lo], end = ran[w.hi];
      out[w.k] = Window{w.first_mb + first, std::max(end - first, 0)};
    }
  }
}

std::uint64_t IterationEngine::shape_hash(const SteadySnapshot& s, const std::vector<std::size_t>& ops,
                                          std::int32_t mb_shift, std::int64_t periods_done) const {
  Hash h;
  const std::int64_t base = s.rank[0];
  for (std::size_t r = 0; r < static_cast<std::size_t>(t_.p); ++r) {
    const std::int64_t* x = &s.rank[r * kRankFields];
    h.add(static_cast<std::int64_t>(s.cut[r]) - periods_done * static_cast<std::int64_t>(ops[r]));
    h.add(x[0] - base);
    h.add(x[1] - base);
    h.add(x[4] <= x[0] ? -1 : x[4] - base);  // collectives that end before the clock never matter
    h.add(static_cast<std::int64_t>(s.lane_at[r + 1] - s.lane_at[r]));
  }
  for (const std::int64_t t : s.lane) h.add(t - base);
  // The pending windows, but for the marks (marks_only), written out: this runs at every cut,
  // for every chunk (DualPipeV at 64 x 1024: 5 % of an estimate as calls of a window accessor).
  const std::int64_t mb_back = periods_done * mb_shift;
  const std::int32_t* ran = s.ran.data();
  constexpr auto kF = static_cast<std::size_t>(OpKind::forward), kB = static_cast<std::size_t>(OpKind::backward),
                 kW = static_cast<std::size_t>(OpKind::weight_grad);
  for (std::int32_t g = 0; g < stages_; ++g) {
    const auto at = [&](std::int32_t chunk, std::size_t kind) { return ran[static_cast<std::size_t>(chunk) * 3 + kind]; };
    const std::int32_t first_mb = pipeline_first(g);
    const auto add = [&](std::int32_t first, std::int32_t end) {
      const std::int32_t count = std::max(end - first, 0);
      h.add(count);
      if (count > 0) h.add(first_mb + first - mb_back);
    };
    const bool starts = g == 0 || g == second_start_, ends = g + 1 == stages_ || g + 1 == second_start_;
    const std::int32_t f = at(g, kF), b = at(g, kB);
    add(f, starts ? f : at(g - 1, kF));         // kFwdReady: forward inputs (a first chunk's are there at t = 0)
    if (!ends) add(b, at(g + 1, kB));           // kBwdReady: backward inputs (a last chunk's: its marks)
    add(t_.split_backward ? at(g, kW) : b, b);  // kBDone: weight-gradient inputs
  }
  return h.done();
}

std::vector<std::int64_t> IterationEngine::rank_shifts(const SteadySnapshot& before, const SteadySnapshot& now,
                                                      bool own_only) const {
  const auto p = static_cast<std::size_t>(t_.p);
  if (now.lane.size() != before.lane.size()) return {};
  std::vector<std::int64_t> ns(p);
  for (std::size_t r = 0; r < p; ++r) {
    const std::int64_t* b = &before.rank[r * kRankFields];
    const std::int64_t* n = &now.rank[r * kRankFields];
    ns[r] = n[0] - b[0];
    if (ns[r] <= 0 || n[1] - b[1] != ns[r]) return {};
    // A rank's collectives matter only while they end after its clock (gap() compares them with
    // the start of its next gaps, which begin at or after the clock).
    const bool past_before = b[4] <= b[0], past_now = n[4] <= n[0];
    if (past_before != past_now || (!past_now && n[4] - b[4] != ns[r])) return {};
    if (now.lane_at[r + 1] - now.lane_at[r] != before.lane_at[r + 1] - before.lane_at[r]) return {};
    for (std::size_t i = now.lane_at[r]; i < now.lane_at[r + 1]; ++i) {
      if (now.lane[i] - before.lane[i] != ns[r]) return {};
    }
  }
  // Equal clocks are the uniform search's (shape_hash) to find.
  if (own_only && std::all_of(ns.begin(), ns.end(), [&](std::int64_t x) { return x == ns[0]; })) return {};
  return ns;
}

bool IterationEngine::pending_repeat(SteadySnapshot& before, SteadySnapshot& now, std::int32_t mb_shift,
                                     const std::vector<std::int64_t>& ns) const {
  fill_windows(before);
  fill_windows(now);
  for (const WindowSpec& w : plain_windows_) {
    const Window a = before.windows[w.k], b = now.windows[w.k];
    if (a.count != b.count || (b.count > 0 && b.first - a.first != mb_shift)) return false;
  }
  // The pending times, window by window: each is where its producer wrote it, a period of the
  // producer's later.
  for (const WindowSpec& w : plain_windows_) {
    const Window a = before.windows[w.k], b = now.windows[w.k];
    if (b.count == 0) continue;
    const std::int64_t shift = ns[static_cast<std::size_t>(w.producer)];
    const std::int64_t* was = plane(w.which) + pair(w.g, a.first);
    const std::int64_t* is = plane(w.which) + pair(w.g, b.first);
    for (std::int32_t i = 0; i < b.count; ++i) {
      if (is[i] - was[i] != shift) return false;
    }
  }
  return true;
}

bool IterationEngine::skip_lands(const SteadySnapshot& before, const SteadySnapshot& now, std::int32_t mb_shift,
                                 std::int64_t periods, std::int32_t marks_periods) {
  const std::int64_t shift_mb = periods * mb_shift;
  // Every pending time lands on a micro-batch of its pipeline (the skipped periods exist), and
  // every chunk whose forwards run in the period ran `marks_periods` periods of them before (the
  // marks, write_marks()). On the way, the micro-batches the skip writes: where the windows
  // land, and the marks (a run of a whole table set all of them up at its start).
  const std::int32_t pipeline_micro_batches = second_start_ >= 0 ? m_ / 2 : m_;
  // A marks window [readers run, writers run) moves on by what the skip runs of each.
  const auto per_period = [&](std::uint32_t k) { return now.ran[k] - before.ran[k]; };
  std::int64_t lo = m_, hi = 0;
  for (const WindowSpec& spec : marks_windows_) {
    const Window w = now.windows[spec.k];
    const std::int64_t ran = w.first + w.count;
    const std::int32_t writers = per_period(spec.writers);
    if (writers != 0 && (writers != mb_shift || ran - marks_periods * mb_shift < spec.first_mb)) return false;
    const std::int64_t from = std::max(ran, w.first + periods * per_period(spec.readers)), to = ran + periods * writers;
    if (from < to) lo = std::min(lo, from), hi = std::max(hi, to);
  }
  for (const WindowSpec& spec : plain_windows_) {
    const Window w = now.windows[spec.k];
    if (w.count == 0) continue;
    const std::int64_t ran = w.first + w.count;
    if (ran + shift_mb > spec.first_mb + pipeline_micro_batches) return false;
    lo = std::min(lo, w.first + shift_mb), hi = std::max(hi, ran + shift_mb);
  }
  ensure_times(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(std::min<std::int64_t>(hi, m_)));
  return true;
}

template <class Shift>
void IterationEngine::repeat_lists(const SteadySnapshot& before, const SteadySnapshot& now, std::size_t r,
                                   std::int64_t periods, Shift shift) {
  RankActivity& a = activity_[r];
  // The first rank's own lists follow every rank's pair (take_snapshot).
  const std::size_t p = activity_.size();
  const std::size_t lists = r == 0 ? 4 : 2;
  const std::array<std::pair<std::vector<Interval>*, std::size_t>, 4> all = {
      {{&a.gaps, 2 * r}, {&a.collectives, 2 * r + 1}, {&first_idle_, 2 * p}, {&first_sends_, 2 * p + 1}}};
  for (std::size_t l = 0; l < lists; ++l) {
    const auto [list, k] = all[l];
    const std::size_t from = before.lists[k];
    const std::size_t to = now.lists[k];
    if (from == to) continue;
    list->reserve(list->size() + static_cast<std::size_t>(periods) * (to - from));
    for (std::int64_t j = 1; j <= periods; ++j) {
      for (std::size_t i = from; i < to; ++i) list->push_back(shift(*list, i, to - from, j));
    }
  }
}

template <class Shift>
void IterationEngine::write_marks(const SteadySnapshot& before, const SteadySnapshot& now, std::int32_t mb_shift,
                                  std::int64_t periods, Shift shift) {
  const auto per_period = [&](std::uint32_t k) { return now.ran[k] - before.ran[k]; };
  for (const WindowSpec& spec : marks_windows_) {
    const Window w = now.windows[spec.k];
    std::int64_t* row = plane(spec.which) + pair(spec.g, 0);
    const std::int64_t writers = periods * per_period(spec.writers);
    const std::int64_t readers = periods * per_period(spec.readers);
    const std::int64_t ran = w.first + w.count;  // the chunk's writers that have run
    const std::int64_t from = std::max(ran, w.first + readers);
    // Periods back to one that ran: (mb - ran) / mb_shift + 1, counted up as mb goes.
    std::int64_t back = (from - ran) / mb_shift + 1, in_period = (from - ran) % mb_shift;
    for (std::int64_t mb = from; mb < ran + writers; ++mb) {
      const std::int64_t was = mb - back * mb_shift;  // a mark of the last period run
      row[mb] = row[was] + back * shift(spec, row, was);
      if (++in_period == mb_shift) {
        in_period = 0;
        ++back;
      }
    }
  }
}

template <class Shift>
void IterationEngine::move_pending(const SteadySnapshot& now, std::int64_t shift_mb, Shift shift) {
  for (const WindowSpec& spec : plain_windows_) {
    const Window w = now.windows[spec.k];
    if (w.count == 0) continue;
    std::int64_t* row = plane(spec.which) + pair(spec.g, 0);
    for (std::int64_t mb = w.first + w.count - 1; mb >= w.first; --mb) row[mb + shift_mb] = row[mb] + shift(spec, row, mb);
  }
}

std::int64_t IterationEngine::skip_periods(const SteadySnapshot& before, const SteadySnapshot& now,
                                           const std::vector<std::size_t>& ops, std::int32_t mb_shift,
                                           std::int64_t periods, const std::vector<std::int64_t>& ns) {
  if (!skip_lands(before, now, mb_shift, periods, 1)) return 0;
  std::int64_t skipped = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(t_.p); ++r) {
    const std::int64_t* b = &before.rank[r * kRankFields];
    const std::int64_t* n = &now.rank[r * kRankFields];
    const std::int64_t shift_ns = periods * ns[r];
    next_[r] += static_cast<std::size_t>(periods) * ops[r];
    skipped += periods * static_cast<std::int64_t>(ops[r]);
    free_[r] += shift_ns;
    prev_start_[r] += shift_ns;
    busy_[r] += periods * (n[2] - b[2]);
    activity_[r].clear_gap_ns += periods * (n[3] - b[3]);
    if (n[4] > n[0]) collective_end_[r] += shift_ns;
    // The period's gaps and collectives, once more for each skipped period.
    repeat_lists(before, now, r, periods, [&](const std::vector<Interval>& list, std::size_t i, std::size_t, std::int64_t j) {
      return Interval{list[i].begin_ns + j * ns[r], list[i].end_ns + j * ns[r]};
    });
    lanes_[r].shift_tail(n[1], shift_ns);
  }
  // The pending times, moved to the micro-batches they belong to after the skip (from the top:
  // a window may overlap its own destination), each its producer's periods later. The marks of
  // the ops skipped whose readers were not (a last chunk's losses, backward ends): each the end
  // of the op it stands for, whole periods of its producer after one of the last period run.
  write_marks(before, now, mb_shift, periods,
              [&](const WindowSpec& spec, const std::int64_t*, std::int64_t) { return ns[static_cast<std::size_t>(spec.producer)]; });
  move_pending(now, periods * mb_shift, [&](const WindowSpec& spec, const std::int64_t*, std::int64_t) {
    return periods * ns[static_cast<std::size_t>(spec.producer)];
  });
  // The ops skipped, counted as run: each period ran those between the two snapshots.
  for (std::size_t k = 0; k < ran_.size(); ++k) ran_[k] += static_cast<std::int32_t>(periods * (now.ran[k] - before.ran[k]));
  skipped_ops_ += skipped;
  return skipped;
}

bool IterationEngine::drift_shifts(SteadySnapshot& s0, SteadySnapshot& s1, SteadySnapshot& s2, std::int32_t mb_shift,
                                   Drift& out) const {
  const auto p = static_cast<std::size_t>(t_.p);
  if (s0.lane.size() != s1.lane.size() || s1.lane.size() != s2.lane.size()) return false;
  for (auto* v : {&out.clock, &out.last_start, &out.collective, &out.lane, &out.busy, &out.clear_gap, &out.clear_gap_change}) {
    v->assign(p, 0);
  }
  // A shift that is the same in both periods.
  const auto same = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t& shift) {
    shift = c - b;
    return shift == b - a;
  };
  for (std::size_t r = 0; r < p; ++r) {
    const std::int64_t* a = &s0.rank[r * kRankFields];
    const std::int64_t* b = &s1.rank[r * kRankFields];
    const std::int64_t* c = &s2.rank[r * kRankFields];
    if (!same(a[0], b[0], c[0], out.clock[r]) || out.clock[r] <= 0) return false;
    if (!same(a[1], b[1], c[1], out.last_start[r])) return false;
    if (!same(a[2], b[2], c[2], out.busy[r])) return false;
    out.clear_gap[r] = c[3] - b[3];
    out.clear_gap_change[r] = (c[3] - b[3]) - (b[3] - a[3]);
    // Collectives that end before the clock never matter (rank_shifts()).
    const bool past = c[4] <= c[0];
    if ((a[4] <= a[0]) != past || (b[4] <= b[0]) != past) return false;
    if (!past && !same(a[4], b[4], c[4], out.collective[r])) return false;
    // Gaps and collectives: as many added in each period (each moves on by a shift of its own).
    for (std::size_t k = 2 * r; k < 2 * r + 2; ++k) {
      if (s2.lists[k] - s1.lists[k] != s1.lists[k] - s0.lists[k]) return false;
    }
    const std::size_t n = s2.lane_at[r + 1] - s2.lane_at[r];
    if (s1.lane_at[r + 1] - s1.lane_at[r] != n || s0.lane_at[r + 1] - s0.lane_at[r] != n) return false;
    // The lane tail moves on as one (CommLane::shift_tail).
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t shift = 0;
      if (!same(s0.lane[s0.lane_at[r] + i], s1.lane[s1.lane_at[r] + i], s2.lane[s2.lane_at[r] + i], shift)) return false;
      if (i == 0) out.lane[r] = shift;
      if (shift != out.lane[r]) return false;
    }
  }
  // The first rank's idle stretches and sends, as its gaps.
  for (std::size_t k = 2 * p; k < 2 * p + 2; ++k) {
    if (s2.lists[k] - s1.lists[k] != s1.lists[k] - s0.lists[k]) return false;
  }
  for (std::size_t k = 0; k < s2.ran.size(); ++k) {
    if (s2.ran[k] - s1.ran[k] != s1.ran[k] - s0.ran[k]) return false;
  }
  fill_windows(s0);
  fill_windows(s1);
  fill_windows(s2);
  for (const WindowSpec& w : plain_windows_) {
    const Window a = s0.windows[w.k], b = s1.windows[w.k], c = s2.windows[w.k];
    if (a.count != c.count || b.count != c.count) return false;
    if (c.count > 0 && (c.first - b.first != mb_shift || b.first - a.first != mb_shift)) return false;
  }
  for (const WindowSpec& w : plain_windows_) {
    const Window c = s2.windows[w.k];
    const std::int64_t* row = plane(w.which) + pair(w.g, 0);
    for (std::int32_t mb = c.first; mb < c.first + c.count; ++mb) {
      std::int64_t shift = 0;
      if (!same(row[mb - 2 * mb_shift], row[mb - mb_shift], row[mb], shift)) return false;
    }
  }
  return true;
}

std::int64_t IterationEngine::skip_drift(const SteadySnapshot& s1, const SteadySnapshot& s2,
                                         const std::vector<std::size_t>& ops, std::int32_t mb_shift, std::int64_t periods,
                                         const Drift& drift) {
  // As skip_periods(), every time moved on by its own shift; a mark's and a pending time's read
  // from the two periods before it, so both must have run.
  if (!skip_lands(s1, s2, mb_shift, periods, 2)) return 0;
  std::int64_t skipped = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(t_.p); ++r) {
    const std::int64_t* c = &s2.rank[r * kRankFields];
    next_[r] += static_cast<std::size_t>(periods) * ops[r];
    skipped += periods * static_cast<std::int64_t>(ops[r]);
    free_[r] += periods * drift.clock[r];
    prev_start_[r] += periods * drift.last_start[r];
    busy_[r] += periods * drift.busy[r];
    // The clear gap time of period j after s2 is the last period's and j changes more.
    activity_[r].clear_gap_ns += periods * drift.clear_gap[r] + drift.clear_gap_change[r] * periods * (periods + 1) / 2;
    if (c[4] > c[0]) collective_end_[r] += periods * drift.collective[r];
    // The last period's gaps and collectives, once more for each skipped period, each moved on by
    // its shift from the period before.
    repeat_lists(s1, s2, r, periods, [](const std::vector<Interval>& list, std::size_t i, std::size_t n, std::int64_t j) {
      const Interval x = list[i], was = list[i - n];
      return Interval{x.begin_ns + j * (x.begin_ns - was.begin_ns), x.end_ns + j * (x.end_ns - was.end_ns)};
    });
    lanes_[r].shift_tail(c[1], periods * drift.lane[r]);
  }
  const auto own_shift = [mb_shift](const WindowSpec&, const std::int64_t* row, std::int64_t mb) {
    return row[mb] - row[mb - mb_shift];
  };
  write_marks(s1, s2, mb_shift, periods, own_shift);
  move_pending(s2, periods * mb_shift, [&](const WindowSpec& spec, const std::int64_t* row, std::int64_t mb) {
    return periods * own_shift(spec, row, mb);
  });
  for (std::size_t k = 0; k < ran_.size(); ++k) ran_[k] += static_cast<std::int32_t>(periods * (s2.ran[k] - s1.ran[k]));
  skipped_ops_ += skipped;
  return skipped;
}

void IterationEngine::note_margins(std::int32_t r, std::size_t i, const ScheduleOp& o, std::int32_t g,
                                   std::int64_t free) {
  std::int64_t ready = op_input_ready(o, g);
  std::int32_t from = input_rank(o.kind, g);
  if (o.pairs_with_next) {
    const ScheduleOp& second = rows_->data(static_cast<std::size_t>(r))[i + 1];
    const std::int32_t g2 = global_of(r, second.chunk);
    const std::int64_t other = op_input_ready(second, g2);
    const std::int32_t other_from = input_rank(second.kind, g2);
    if (from >= 0 && other_from >= 0) note_margin(from, other_from, ready - other, true);
    if (other > ready) {
      ready = other;
      from = other_from;
    }
  }
  if (from >= 0) note_margin(r, from, free - ready, false);
}

std::int64_t IterationEngine::margin_cycles(const std::vector<std::int64_t>& ns) const {
  std::int64_t cycles = INT64_MAX;
  for (const Margin& m : margins_) {
    const std::int64_t slope = ns[static_cast<std::size_t>(m.a)] - ns[static_cast<std::size_t>(m.b)];
    if (slope == 0) continue;
    // An op that waited for its input (free - ready < 0) follows that input's rank: moving apart
    // from it, the op's rank would no longer move on by its own period.
    if (m.margin == 0 || (!m.pair && m.margin < 0)) return 0;
    // The margin keeps its sign through `cycles` more periods (reaching zero at the last is a
    // tie: the max() is the same whichever side it takes).
    if ((m.margin > 0) == (slope < 0)) cycles = std::min(cycles, (m.margin > 0 ? m.margin : -m.margin) / (slope > 0 ? slope : -slope));
  }
  return cycles;
}

}  // namespace plansight::estimator
