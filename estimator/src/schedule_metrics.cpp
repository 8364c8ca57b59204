// Pipeline bubble and the ASCII picture, computed from a Timeline only. Both work on per-rank
// merged interval lists, so several compute streams of one rank (measured traces) count once.
#include "plansight/estimator/schedule_metrics.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <utility>

namespace plansight::estimator {
namespace {

struct Range {
  std::int64_t begin, end;
};

// Intervals gathered track by track: each track's spans are sorted by start (Track's contract),
// so the list is a few sorted runs, joined by linear merges instead of a full sort.
struct Runs {
  std::vector<Range> ranges;
  std::vector<std::size_t> starts;  // index where each run begins
  void begin_run() {
    if (starts.empty() || starts.back() != ranges.size()) starts.push_back(ranges.size());
  }
};

bool by_begin(const Range& a, const Range& b) { return a.begin < b.begin; }

// Sorts (run by run, then merging the runs) and merges overlapping or touching intervals.
std::vector<Range> merged(Runs runs) {
  auto& v = runs.ranges;
  for (std::size_t i = 0; i < runs.starts.size(); ++i) {
    const auto first = v.begin() + static_cast<std::ptrdiff_t>(runs.starts[i]);
    const auto last = i + 1 < runs.starts.size() ? v.begin() + static_cast<std::ptrdiff_t>(runs.starts[i + 1]) : v.end();
    if (!std::is_sorted(first, last, by_begin)) std::sort(first, last, by_begin);  // a track out of order
    if (i > 0) std::inplace_merge(v.begin(), first, last, by_begin);
  }
  std::vector<Range> out;
  out.reserve(v.size());
  for (const Range& i : v) {
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

struct RankSpans {
  Runs pipeline;  // compute, not optimizer
  Runs occupied;  // pipeline compute, plus collectives of micro-batches on other lanes
  std::vector<Interval> collectives;  // the other collectives
  bool has_compute = false;
};

// Character class of a compute span for the ASCII picture: index into "FBWRO#".
int glyph_class(Phase phase) {
  switch (phase) {
    case Phase::forward:
      return 0;
    case Phase::backward:
      return 1;
    case Phase::weight_grad:
      return 2;
    case Phase::recompute:
      return 3;
    case Phase::optimizer:
      return 4;
    default:
      return 5;
  }
}

// The pipeline window: the earliest start to the latest end of any rank's pipeline compute
// (empty, end <= begin, when there is none).
std::pair<std::int64_t, std::int64_t> pipeline_window(const std::vector<RankActivity>& ranks) {
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (const RankActivity& r : ranks) {
    if (r.compute_begin_ns > r.compute_end_ns) continue;
    begin = std::min(begin, r.compute_begin_ns);
    end = std::max(end, r.compute_end_ns);
  }
  return {begin, end};
}

}  // namespace

ScheduleBubbles schedule_bubbles(std::vector<RankActivity> ranks, std::int64_t min_gap_ns) {
  return schedule_bubbles_in_place(ranks, min_gap_ns);
}

ScheduleBubbles schedule_bubbles_in_place(std::vector<RankActivity>& ranks, std::int64_t min_gap_ns) {
  ScheduleBubbles report;
  const auto [begin, end] = pipeline_window(ranks);
  if (end <= begin) return report;
  report.window_begin_ns = begin;
  report.window_end_ns = end;
  std::vector<Interval> idle;
  for (RankActivity& r : ranks) {
    // The window outside the rank's extent (fill and drain), and its gaps inside the window
    // less what other collectives fill of them.
    std::int64_t bubble = 0;
    std::int32_t stretches = 0;
    idle.clear();
    if (r.occupied_begin_ns > r.occupied_end_ns) {
      bubble = end - begin;
      stretches = 1;
    } else {
      for (const std::int64_t edge : {std::min(r.occupied_begin_ns, end) - begin, end - std::max(r.occupied_end_ns, begin)}) {
        if (edge > 0) bubble += edge, ++stretches;
      }
      for (const Interval& g : r.gaps) {
        const Interval c{std::max(g.begin_ns, begin), std::min(g.end_ns, end)};
        if (c.length_ns() > 0 && c.length_ns() >= min_gap_ns) idle.push_back(c);
      }
    }
    if (r.clear_gap_ns > 0) bubble += r.clear_gap_ns, ++stretches;
    for (const Interval& i : idle) bubble += i.length_ns();
    stretches += static_cast<std::int32_t>(idle.size());
    if (!r.collectives.empty() && !idle.empty()) {
      r.collectives = merge_intervals(std::move(r.collectives));
      bubble -= intersection_length(idle, r.collectives);
    }
    const std::int64_t busy = (end - begin) - bubble;
    const double fraction = busy > 0 ? static_cast<double>(bubble) / static_cast<double>(busy) : 0.0;
    report.ranks.push_back(r.rank);
    report.busy_ns.push_back(busy);
    report.bubble_ns.push_back(bubble);
    report.fraction.push_back(fraction);
    report.idle_intervals.push_back(stretches);
    report.mean_fraction += fraction;
    report.max_fraction = std::max(report.max_fraction, fraction);
  }
  if (!report.ranks.empty()) report.mean_fraction /= static_cast<double>(report.ranks.size());
  return report;
}

namespace {

// Each rank's activity as schedule_bubbles() reads it from spans (ascending ranks).
std::vector<RankActivity> activity_of(const Timeline& timeline) {
  std::map<std::int32_t, RankSpans> ranks;
  for (const Track& track : timeline.tracks) {
    const bool compute = track.lane == Lane::compute;
    RankSpans* rank = nullptr;
    for (const Span& s : track.spans) {
      if (s.duration_ns <= 0) continue;
      if (!compute && s.kind != SpanKind::collective) continue;
      if (rank == nullptr) {
        rank = &ranks[track.rank];
        rank->occupied.begin_run();
        if (compute) rank->pipeline.begin_run();
      }
      if (compute) rank->has_compute = true;
      if (compute && s.phase == Phase::optimizer) continue;  // hides no bubble (see the header)
      if (!compute && s.micro_batch < 0) {
        rank->collectives.push_back({s.start_ns, s.end_ns()});
        continue;
      }
      const Range i{s.start_ns, s.end_ns()};
      rank->occupied.ranges.push_back(i);
      if (compute) rank->pipeline.ranges.push_back(i);
    }
  }
  std::vector<RankActivity> activity;
  for (auto& [rank, spans] : ranks) {
    if (!spans.has_compute) continue;
    RankActivity a;
    a.rank = rank;
    const std::vector<Range> pipeline = merged(std::move(spans.pipeline));
    if (!pipeline.empty()) {
      a.compute_begin_ns = pipeline.front().begin;
      a.compute_end_ns = pipeline.back().end;
    }
    a.collectives = std::move(spans.collectives);
    const std::vector<Range> occupied = merged(std::move(spans.occupied));
    if (!occupied.empty()) {
      a.occupied_begin_ns = occupied.front().begin;
      a.occupied_end_ns = occupied.back().end;
      for (std::size_t i = 1; i < occupied.size(); ++i) a.gaps.push_back({occupied[i - 1].end, occupied[i].begin});
    }
    activity.push_back(std::move(a));
  }
  return activity;
}

}  // namespace

ScheduleBubbles schedule_bubbles(const Timeline& timeline) { return schedule_bubbles(activity_of(timeline)); }

std::vector<RankBubbleIntervals> bubble_intervals(const Timeline& timeline) {
  std::vector<RankActivity> ranks = activity_of(timeline);
  const auto [begin, end] = pipeline_window(ranks);
  std::vector<RankBubbleIntervals> out;
  for (RankActivity& r : ranks) {
    RankBubbleIntervals row;
    row.rank = r.rank;
    if (end > begin) {
      // The same pieces schedule_bubbles() adds up: fill, gaps less other collectives, drain.
      if (r.occupied_begin_ns > r.occupied_end_ns) {
        row.intervals.push_back({begin, end});
      } else {
        if (r.occupied_begin_ns > begin) row.intervals.push_back({begin, std::min(r.occupied_begin_ns, end)});
        std::vector<Interval> gaps;
        for (const Interval& g : r.gaps) {
          const Interval c{std::max(g.begin_ns, begin), std::min(g.end_ns, end)};
          if (c.length_ns() > 0) gaps.push_back(c);
        }
        for (const Interval& g : subtract(gaps, merge_intervals(std::move(r.collectives)))) row.intervals.push_back(g);
        if (r.occupied_end_ns < end) row.intervals.push_back({std::max(r.occupied_end_ns, begin), end});
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string render_ascii(const Timeline& timeline, int width) {
  width = std::max(width, 1);
  struct Piece {
    std::int64_t begin, end;
    int glyph;
  };
  std::map<std::int32_t, std::vector<Piece>> rows;
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (const Track& track : timeline.tracks) {
    for (const Span& s : track.spans) {
      begin = std::min(begin, s.start_ns);
      end = std::max(end, s.end_ns());
      if (track.lane != Lane::compute || s.duration_ns <= 0) continue;
      rows[track.rank].push_back(Piece{s.start_ns, s.end_ns(), glyph_class(s.phase)});
    }
  }
  if (rows.empty() || end <= begin) return "";
  const long double span_ns = static_cast<long double>(end - begin);
  // Edge of bucket i; bucket i is [edge(i), edge(i + 1)).
  auto edge = [&](std::int64_t i) {
    return begin + static_cast<std::int64_t>(span_ns * static_cast<long double>(i) / width);
  };
  std::size_t label_width = 0;
  for (const auto& row : rows)
    label_width = std::max(label_width, std::to_string(row.first).size());
  static constexpr std::array<char, 6> kGlyphs{'F', 'B', 'W', 'R', 'O', '#'};
  std::string out;
  std::vector<std::array<std::int64_t, 6>> cover(static_cast<std::size_t>(width));
  for (const auto& [rank, pieces] : rows) {
    for (auto& c : cover) c.fill(0);
    for (const Piece& piece : pieces) {
      // First bucket that can hold piece.begin, then walk right while buckets start before its end.
      auto b = static_cast<std::int64_t>(static_cast<long double>(piece.begin - begin) * width /
                                         span_ns);
      b = std::clamp<std::int64_t>(b, 0, width - 1);
      while (b > 0 && edge(b) > piece.begin) --b;
      for (; b < width && edge(b) < piece.end; ++b) {
        const std::int64_t lo = std::max(piece.begin, edge(b)),
                           hi = std::min(piece.end, edge(b + 1));
        if (hi > lo)
          cover[static_cast<std::size_t>(b)][static_cast<std::size_t>(piece.glyph)] += hi - lo;
      }
    }
    std::string label = std::to_string(rank);
    label.resize(label_width, ' ');
    out += "r" + label + " |";
    for (std::int64_t b = 0; b < width; ++b) {
      const auto& c = cover[static_cast<std::size_t>(b)];
      std::int64_t total = 0;
      std::size_t best = 0;
      for (std::size_t g = 0; g < c.size(); ++g) {
        total += c[g];
        if (c[g] > c[best]) best = g;
      }
      const std::int64_t length = edge(b + 1) - edge(b);
      out += (length > 0 && 2 * total >= length) ? kGlyphs[best] : '.';
    }
    out += "|\n";
  }
  return out;
}

}  // namespace plansight::estimator
