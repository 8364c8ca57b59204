// step_phases(): interval unions per rank (estimator/interval_set.h), so nested annotations or
// spans on several lanes of one rank are counted once.
#include "plansight/core/step_phases.h"

#include <algorithm>
#include <map>

#include "plansight/estimator/interval_set.h"
#include "plansight/estimator/peer_waiting.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

struct RankIntervals {
  std::vector<est::Interval> forward, backward, optimizer, other, transfer, waiting;
};

// Where a phase's processor time comes from spans that measured it (Span::cpu_ns): the sum of
// their threads' CPU time, per category, over every rank.
struct MeasuredCpu {
  double forward_ns = 0, backward_ns = 0, optimizer_ns = 0, other_ns = 0, communication_ns = 0;
};

bool is_communication(const est::Track& track, const est::Span& span) {
  return track.lane == est::Lane::communication || span.kind == est::SpanKind::collective ||
         span.kind == est::SpanKind::send || span.kind == est::SpanKind::recv || span.phase == est::Phase::communication;
}

// Annotations enclose kernels of other phases (an imported ProfilerStep spans the whole step)
// and host spans (CPU ops) run beside the kernels they launch: counting either would hide the
// device's own time, as diff_timelines() leaves them out for the same reason. Predicted and
// probe timelines have neither, so this matters for imported traces only.
bool is_device_work(const est::Track& track, const est::Span& span) {
  return track.lane != est::Lane::host && span.kind != est::SpanKind::idle && span.kind != est::SpanKind::annotation &&
         span.kind != est::SpanKind::host;
}

// Each rank's time per category: disjoint interval lists, earlier categories winning where one
// rank's spans overlap (they should not, but an annotation around kernels of another phase must
// not count twice).
struct RankCategories {
  std::vector<est::Interval> forward, backward, optimizer, other, transfer, waiting, covered;
};

// `cpu`: where given, spans with a CPU time add it to their category there instead of entering
// the interval lists (processor time needs no inference where the thread's clock was read).
std::map<std::int32_t, RankCategories> rank_categories(const est::Timeline& timeline, MeasuredCpu* cpu = nullptr) {
  std::map<std::int32_t, RankIntervals> ranks;
  std::vector<est::CommunicationCall> comm;
  for (const auto& track : timeline.tracks) {
    auto& r = ranks[track.rank];
    for (const auto& s : track.spans) {
      if (!is_device_work(track, s) || s.duration_ns <= 0) continue;
      if (cpu && s.cpu_ns >= 0) {
        const auto ns = static_cast<double>(s.cpu_ns);
        if (is_communication(track, s)) {
          cpu->communication_ns += ns;
        } else if (s.phase == est::Phase::forward) {
          cpu->forward_ns += ns;
        } else if (s.phase == est::Phase::backward || s.phase == est::Phase::weight_grad || s.phase == est::Phase::recompute) {
          cpu->backward_ns += ns;
        } else if (s.phase == est::Phase::optimizer) {
          cpu->optimizer_ns += ns;
        } else {
          cpu->other_ns += ns;
        }
        continue;
      }
      const est::Interval iv{s.start_ns, s.end_ns()};
      if (is_communication(track, s)) {
        comm.push_back({track.rank, &s, s.start_ns});
        continue;
      }
      switch (s.phase) {
        case est::Phase::forward: r.forward.push_back(iv); break;
        case est::Phase::backward:
        case est::Phase::weight_grad:
        case est::Phase::recompute: r.backward.push_back(iv); break;
        case est::Phase::optimizer: r.optimizer.push_back(iv); break;
        default: r.other.push_back(iv); break;
      }
    }
  }
  est::mark_peer_ready(comm);  // waiting for a peer is idle time (peer_waiting.h)
  for (const auto& c : comm) {
    ranks[c.rank].waiting.push_back({c.span->start_ns, c.ready_ns});
    ranks[c.rank].transfer.push_back({c.ready_ns, c.span->end_ns()});
  }
  std::map<std::int32_t, RankCategories> out;
  for (auto& [rank, r] : ranks) {
    RankCategories& c = out[rank];
    auto take = [&](std::vector<est::Interval>& list, std::vector<est::Interval>& mine) {
      mine = est::subtract(est::merge_intervals(std::move(list)), c.covered);
      std::vector<est::Interval> both = c.covered;
      both.insert(both.end(), mine.begin(), mine.end());
      c.covered = est::merge_intervals(std::move(both));
    };
    take(r.forward, c.forward);
    take(r.backward, c.backward);
    take(r.optimizer, c.optimizer);
    take(r.other, c.other);
    take(r.transfer, c.transfer);
    take(r.waiting, c.waiting);  // inside a communication call, part of the idle time
  }
  return out;
}

double seconds(const std::vector<est::Interval>& list) { return static_cast<double>(est::total_length(list)) * 1e-9; }

// How many ranks do device work (waiting aside) from each boundary on: piecewise constant.
struct Concurrency {
  std::vector<std::int64_t> at;  // segment starts, ascending
  std::vector<int> ranks;        // ranks busy in [at[i], at[i + 1])
};

Concurrency concurrency(const std::map<std::int32_t, RankCategories>& ranks, int ranks_per_track) {
  std::vector<std::pair<std::int64_t, int>> events;
  for (const auto& [rank, c] : ranks) {
    const auto busy = est::subtract(c.covered, est::merge_intervals(std::vector<est::Interval>(c.waiting)));
    for (const auto& iv : busy) {
      events.push_back({iv.begin_ns, +ranks_per_track});
      events.push_back({iv.end_ns, -ranks_per_track});
    }
  }
  std::sort(events.begin(), events.end());
  Concurrency k;
  int now = 0;
  for (std::size_t i = 0; i < events.size();) {
    const std::int64_t t = events[i].first;
    for (; i < events.size() && events[i].first == t; ++i) now += events[i].second;
    k.at.push_back(t);
    k.ranks.push_back(now);
  }
  return k;
}

// Processor seconds of one rank's disjoint, sorted intervals: each instant at min(1, P / k).
double processor_seconds(const std::vector<est::Interval>& list, const Concurrency& k, double processors) {
  double ns = 0;
  std::size_t seg = 0;
  for (const auto& iv : list) {
    while (seg + 1 < k.at.size() && k.at[seg + 1] <= iv.begin_ns) ++seg;
    for (std::size_t j = seg; j < k.at.size() && k.at[j] < iv.end_ns; ++j) {
      const std::int64_t from = std::max(iv.begin_ns, k.at[j]);
      const std::int64_t to = j + 1 < k.at.size() ? std::min(iv.end_ns, k.at[j + 1]) : iv.end_ns;
      if (to <= from) continue;
      const int busy = std::max(k.ranks[j], 1);
      ns += static_cast<double>(to - from) * std::min(1.0, processors / busy);
    }
  }
  return ns * 1e-9;
}

}  // namespace

StepPhases step_phases(const est::Timeline& timeline) { return step_phases(timeline, 0); }

StepPhases step_phases(const est::Timeline& timeline, std::int64_t processors, std::int64_t ranks_per_track) {
  StepPhases out;
  const std::int64_t begin = timeline.begin_ns(), end = timeline.end_ns();
  if (end <= begin) return out;
  const double window = static_cast<double>(end - begin) * 1e-9;
  const double m = static_cast<double>(std::max<std::int64_t>(ranks_per_track, 1));
  std::int64_t rank_count = 0;
  {
    std::vector<std::int32_t> seen;
    for (const auto& track : timeline.tracks) seen.push_back(track.rank);
    std::sort(seen.begin(), seen.end());
    rank_count = std::unique(seen.begin(), seen.end()) - seen.begin();
  }
  const bool processor_time = processors > 0 && static_cast<double>(processors) < static_cast<double>(rank_count) * m;
  MeasuredCpu cpu;
  const auto ranks = rank_categories(timeline, processor_time ? &cpu : nullptr);
  if (ranks.empty()) return out;
  const double n = static_cast<double>(ranks.size());
  for (const auto& [rank, c] : ranks) out.waiting_s += seconds(c.waiting);
  out.waiting_s /= n;
  out.step_s = window;
  if (processor_time) {
    const Concurrency k = concurrency(ranks, static_cast<int>(m));
    const double p = static_cast<double>(processors);
    for (const auto& [rank, c] : ranks) {
      out.forward_s += processor_seconds(c.forward, k, p);
      out.backward_s += processor_seconds(c.backward, k, p);
      out.optimizer_s += processor_seconds(c.optimizer, k, p);
      out.other_s += processor_seconds(c.other, k, p);
      out.communication_s += processor_seconds(c.transfer, k, p);
    }
    // Spans that read their thread's CPU clock (the CPU probe's) give their processor time as it
    // was: no inference from how many ranks were busy at once.
    out.forward_s += cpu.forward_ns * 1e-9, out.backward_s += cpu.backward_ns * 1e-9;
    out.optimizer_s += cpu.optimizer_ns * 1e-9, out.other_s += cpu.other_ns * 1e-9;
    out.communication_s += cpu.communication_ns * 1e-9;
    // Each track's processor time counts for the ranks it stands for.
    const double scale = m / p;
    out.forward_s *= scale, out.backward_s *= scale, out.optimizer_s *= scale, out.other_s *= scale;
    out.communication_s *= scale;
    const double used = out.forward_s + out.backward_s + out.optimizer_s + out.other_s + out.communication_s;
    out.idle_s = std::max(0.0, window - used);
    return out;
  }
  for (const auto& [rank, c] : ranks) {
    out.forward_s += seconds(c.forward);
    out.backward_s += seconds(c.backward);
    out.optimizer_s += seconds(c.optimizer);
    out.other_s += seconds(c.other);
    out.communication_s += seconds(c.transfer);
    out.idle_s += window - seconds(c.covered);
  }
  out.forward_s /= n, out.backward_s /= n, out.optimizer_s /= n, out.other_s /= n;
  out.communication_s /= n;
  out.idle_s = out.idle_s / n + out.waiting_s;
  return out;
}

}  // namespace plansight::core
