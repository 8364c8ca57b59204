// step_phases(): interval unions per rank (estimator/interval_set.h), so nested annotations or
// spans on several lanes of one rank are counted once.
#include "plansight/core/step_phases.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

#include "plansight/estimator/interval_set.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

struct RankIntervals {
  std::vector<est::Interval> forward, backward, optimizer, other, transfer, waiting;
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

struct CommSpan {
  std::int32_t rank;
  const est::Span* span;
  std::int64_t ready_ns;  // when the data could start moving; before it, the rank waits for a peer
};

// A blocking call's time before its last peer arrived is waiting, not communication (on the
// CPU a peer is often late because ranks share cores). Collectives: the k-th call with the same
// name, stage, micro-batch and phase on each rank is one collective, ready when the last member
// started it. Receives: ready when the matching send (same micro-batch, phase and bytes on
// another rank, the latest one started before the receive ended) started. A timeline without
// peers (predicted: one rank per stage) keeps every call whole.
void mark_ready(std::vector<CommSpan>& comm) {
  using Key = std::tuple<std::int32_t, std::int32_t, std::int32_t, est::Phase>;
  std::map<Key, std::map<std::int32_t, std::vector<CommSpan*>>> collectives;
  std::vector<const CommSpan*> sends;
  for (auto& c : comm) {
    c.ready_ns = c.span->start_ns;
    if (c.span->kind == est::SpanKind::send) sends.push_back(&c);
    if (c.span->kind != est::SpanKind::collective) continue;
    collectives[{c.span->name_id, c.span->stage, c.span->micro_batch, c.span->phase}][c.rank].push_back(&c);
  }
  for (auto& [key, by_rank] : collectives) {
    std::size_t calls = 0;
    for (auto& [rank, list] : by_rank) {
      std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->span->start_ns < b->span->start_ns; });
      calls = std::max(calls, list.size());
    }
    for (std::size_t k = 0; k < calls; ++k) {
      std::int64_t ready = INT64_MIN;
      for (auto& [rank, list] : by_rank) if (k < list.size()) ready = std::max(ready, list[k]->span->start_ns);
      for (auto& [rank, list] : by_rank) if (k < list.size()) list[k]->ready_ns = ready;
    }
  }
  for (auto& c : comm) {
    if (c.span->kind != est::SpanKind::recv) continue;
    const CommSpan* match = nullptr;
    for (const CommSpan* s : sends) {
      const auto& a = *s->span;
      if (s->rank == c.rank || a.micro_batch != c.span->micro_batch || a.phase != c.span->phase || a.bytes != c.span->bytes ||
          a.start_ns > c.span->end_ns()) {
        continue;
      }
      if (!match || a.start_ns > match->span->start_ns) match = s;
    }
    if (match) c.ready_ns = std::max(c.span->start_ns, match->span->start_ns);
  }
}

}  // namespace

StepPhases step_phases(const est::Timeline& timeline) {
  StepPhases out;
  const std::int64_t begin = timeline.begin_ns(), end = timeline.end_ns();
  if (end <= begin) return out;
  std::map<std::int32_t, RankIntervals> ranks;
  std::vector<CommSpan> comm;
  for (const auto& track : timeline.tracks) {
    auto& r = ranks[track.rank];
    for (const auto& s : track.spans) {
      if (!is_device_work(track, s) || s.duration_ns <= 0) continue;
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
  mark_ready(comm);
  for (const auto& c : comm) {
    const std::int64_t ready = std::clamp(c.ready_ns, c.span->start_ns, c.span->end_ns());
    ranks[c.rank].waiting.push_back({c.span->start_ns, ready});
    ranks[c.rank].transfer.push_back({ready, c.span->end_ns()});
  }
  if (ranks.empty()) return out;
  const double window = static_cast<double>(end - begin) * 1e-9;
  for (auto& [rank, r] : ranks) {
    // Earlier categories win where spans of one rank overlap (they should not, but an
    // annotation around kernels of another phase must not count twice).
    std::vector<est::Interval> covered;
    auto take = [&](std::vector<est::Interval>& list) {
      auto mine = est::subtract(est::merge_intervals(std::move(list)), covered);
      const double s = static_cast<double>(est::total_length(mine)) * 1e-9;
      std::vector<est::Interval> both = covered;
      both.insert(both.end(), mine.begin(), mine.end());
      covered = est::merge_intervals(std::move(both));
      return s;
    };
    out.forward_s += take(r.forward);
    out.backward_s += take(r.backward);
    out.optimizer_s += take(r.optimizer);
    out.other_s += take(r.other);
    out.communication_s += take(r.transfer);
    out.waiting_s += take(r.waiting);  // inside a communication call, part of the idle time
    out.idle_s += window - static_cast<double>(est::total_length(covered)) * 1e-9;
  }
  const double n = static_cast<double>(ranks.size());
  out.forward_s /= n, out.backward_s /= n, out.optimizer_s /= n, out.other_s /= n;
  out.communication_s /= n, out.waiting_s /= n;
  out.idle_s = out.idle_s / n + out.waiting_s;
  out.step_s = window;
  return out;
}

}  // namespace plansight::core
