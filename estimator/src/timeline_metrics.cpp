// Per-rank breakdown, overlap, idle gaps and pipeline bubbles by interval sweeps over a Timeline.
#include "plansight/estimator/timeline_metrics.h"

#include <algorithm>
#include <limits>
#include <map>

#include "plansight/estimator/hta_metrics.h"
#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/peer_waiting.h"
#include "plansight/estimator/schedule_metrics.h"

namespace plansight::estimator {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_device_work(const Track& track, const Span& span) { return is_gpu_event(track, span); }

bool is_compute(KernelClass c) { return c == KernelClass::compute || c == KernelClass::tensor_core_gemm; }

bool is_pipeline_phase(Phase p) {
  return p == Phase::forward || p == Phase::backward || p == Phase::weight_grad || p == Phase::recompute;
}

struct ClassSets {
  std::vector<Interval> all, compute, tensor_core, communication, memory;
};

// `calls`: every communication span, for the waiting rule.
std::map<std::int32_t, ClassSets> collect(const Timeline& timeline, const std::vector<KernelClass>& classes,
                                          std::vector<CommunicationCall>& calls) {
  std::map<std::int32_t, ClassSets> ranks;
  for (const auto& track : timeline.tracks) {
    auto& sets = ranks[track.rank];
    for (const auto& span : track.spans) {
      if (!is_device_work(track, span)) continue;
      const Interval iv{span.start_ns, span.end_ns()};
      sets.all.push_back(iv);
      switch (span_class(span, classes)) {
        case KernelClass::tensor_core_gemm: sets.tensor_core.push_back(iv); [[fallthrough]];
        case KernelClass::compute: sets.compute.push_back(iv); break;
        case KernelClass::communication:
          sets.communication.push_back(iv);
          if (span.duration_ns > 0) calls.push_back({track.rank, &span, span.start_ns});
          break;
        case KernelClass::memory: sets.memory.push_back(iv); break;
      }
    }
  }
  return ranks;
}

std::vector<Interval> gaps_of(const std::vector<Interval>& merged, std::int64_t begin_ns, std::int64_t end_ns,
                              std::int64_t min_gap_ns) {
  std::vector<Interval> gaps;
  std::int64_t cursor = begin_ns;
  for (const auto& i : merged) {
    if (i.begin_ns >= end_ns) break;
    if (i.begin_ns - cursor >= std::max<std::int64_t>(min_gap_ns, 1)) gaps.push_back({cursor, i.begin_ns});
    cursor = std::max(cursor, i.end_ns);
  }
  if (end_ns - cursor >= std::max<std::int64_t>(min_gap_ns, 1)) gaps.push_back({cursor, end_ns});
  return gaps;
}

}  // namespace

std::vector<KernelClass> classify_names(const Timeline& timeline, const KernelClassifier& classifier) {
  std::vector<KernelClass> out;
  out.reserve(timeline.names.size());
  for (const auto& n : timeline.names) out.push_back(classifier.classify(n));
  return out;
}

KernelClass span_class(const Span& span, const std::vector<KernelClass>& name_classes) {
  switch (span.kind) {
    case SpanKind::memcpy:
    case SpanKind::memset: return KernelClass::memory;
    case SpanKind::collective:
    case SpanKind::send:
    case SpanKind::recv: return KernelClass::communication;
    default: break;
  }
  KernelClass c = span.name_id >= 0 && static_cast<std::size_t>(span.name_id) < name_classes.size()
                      ? name_classes[static_cast<std::size_t>(span.name_id)]
                      : KernelClass::compute;
  if (span.tensor_core && c == KernelClass::compute) c = KernelClass::tensor_core_gemm;
  return c;
}

std::vector<RankBreakdown> rank_breakdown(const Timeline& timeline, const KernelClassifier& classifier) {
  const auto classes = classify_names(timeline, classifier);
  const auto hta = hta_comm_comp_overlap(timeline);
  std::vector<CommunicationCall> calls;
  auto ranks = collect(timeline, classes, calls);
  mark_peer_ready(calls);
  // Per rank, the calls' time once the last peer arrived (transfer) and before (waiting).
  std::map<std::int32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> moving;
  for (const auto& c : calls) {
    auto& [transfer, waiting] = moving[c.rank];
    transfer.push_back({c.ready_ns, c.span->end_ns()});
    if (c.ready_ns > c.span->start_ns) waiting.push_back({c.span->start_ns, c.ready_ns});
  }
  std::vector<RankBreakdown> out;
  for (auto& [rank, sets] : ranks) {
    RankBreakdown row;
    row.rank = rank;
    const auto all = merge_intervals(std::move(sets.all));
    const auto compute = merge_intervals(std::move(sets.compute));
    const auto comm = merge_intervals(std::move(sets.communication));
    if (!all.empty()) row.window_ns = all.back().end_ns - all.front().begin_ns;
    row.busy_ns = total_length(all);
    row.idle_ns = row.window_ns - row.busy_ns;
    row.compute_ns = total_length(compute);
    row.tensor_core_ns = total_length(merge_intervals(std::move(sets.tensor_core)));
    row.communication_ns = total_length(comm);
    row.overlap_ns = intersection_length(comm, compute);
    // Exposed: data moving while the rank does no other device work, the step phases' rule
    // (step_phases.h): a call's wait for its last peer is idle time, not communication.
    const auto memory = merge_intervals(std::move(sets.memory));
    row.memory_ns = total_length(memory);
    auto& [transfer, waiting] = moving[rank];
    if (waiting.empty() && memory.empty()) {
      // No call waited and no copy ran: the data moved for the calls' whole length, and compute
      // is the only other work (every predicted timeline; what an edit in the app reads).
      row.exposed_communication_ns = row.communication_ns - row.overlap_ns;
    } else {
      std::vector<Interval> other_work = compute;
      other_work.insert(other_work.end(), memory.begin(), memory.end());
      other_work = merge_intervals(std::move(other_work));
      const auto exposed = subtract(merge_intervals(std::move(transfer)), other_work);
      row.exposed_communication_ns = total_length(exposed);
      other_work.insert(other_work.end(), exposed.begin(), exposed.end());
      row.waiting_ns = total_length(subtract(merge_intervals(std::move(waiting)), merge_intervals(std::move(other_work))));
    }
    row.overlap_ratio = row.communication_ns > 0 ? double(row.overlap_ns) / double(row.communication_ns) : kNaN;
    row.hta_overlap_ratio = kNaN;
    for (const auto& h : hta) {
      if (h.rank == rank) row.hta_overlap_ratio = h.ratio;
    }
    out.push_back(row);
  }
  return out;
}

std::vector<Interval> idle_gaps(const Timeline& timeline, std::int32_t rank, std::int64_t min_gap_ns) {
  std::vector<Interval> work;
  for (const auto& track : timeline.tracks) {
    if (track.rank != rank) continue;
    for (const auto& span : track.spans) {
      if (is_device_work(track, span)) work.push_back({span.start_ns, span.end_ns()});
    }
  }
  const auto merged = merge_intervals(std::move(work));
  if (merged.empty()) return {};
  return gaps_of(merged, merged.front().begin_ns, merged.back().end_ns, min_gap_ns);
}

bool is_pipelined(const Timeline& timeline) {
  for (const auto& track : timeline.tracks) {
    for (const auto& span : track.spans) {
      if (span.stage >= 1 || span.kind == SpanKind::send || span.kind == SpanKind::recv) return true;
      if (span.name_id >= 0 && (span.kind == SpanKind::collective || span.kind == SpanKind::kernel)) {
        const CollectiveKind k = collective_kind_from_name(timeline.names[static_cast<std::size_t>(span.name_id)]);
        if (k == CollectiveKind::send || k == CollectiveKind::recv || k == CollectiveKind::send_recv) return true;
      }
    }
  }
  return false;
}

std::vector<StageBubble> pipeline_bubbles(const Timeline& timeline, const BubbleOptions& options,
                                          const KernelClassifier& classifier) {
  // Idle ranks of a data-parallel run are not pipeline stages (issue 17: a pure DP trace got an
  // 18 ms "bubble" per rank).
  if (options.pipeline_ranks.empty() && !is_pipelined(timeline)) return {};
  const auto classes = classify_names(timeline, classifier);
  std::vector<std::int32_t> ranks = options.pipeline_ranks;
  if (ranks.empty()) {
    for (const auto& t : timeline.tracks) ranks.push_back(t.rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  }
  // The one definition of schedule_metrics.h, with the work found by kernel class: pipeline
  // compute (the phase-tagged forward/backward/weight-gradient/recompute work when every stage is
  // tagged, else every compute kernel) and the collectives of its micro-batches make a stage's
  // work; other collectives and copies fill its gaps; point-to-point transfers fill nothing (a
  // receive kernel spins while its stage waits); optimizer kernels hide no bubble.
  struct Sets {
    std::vector<Interval> tagged, compute, work, fill, untagged;
  };
  std::map<std::int32_t, Sets> sets;
  for (const auto& track : timeline.tracks) {
    for (const auto& span : track.spans) {
      if (!is_device_work(track, span) || span.duration_ns <= 0) continue;
      const Interval iv{span.start_ns, span.end_ns()};
      Sets& r = sets[track.rank];
      const KernelClass c = span_class(span, classes);
      if (is_compute(c)) {
        if (span.phase == Phase::optimizer) continue;
        r.compute.push_back(iv);
        (is_pipeline_phase(span.phase) ? r.tagged : r.untagged).push_back(iv);
      } else if (c == KernelClass::communication) {
        const bool p2p = span.kind == SpanKind::send || span.kind == SpanKind::recv ||
                         (span.name_id >= 0 && [&] {
                           const CollectiveKind k = collective_kind_from_name(timeline.names[static_cast<std::size_t>(span.name_id)]);
                           return k == CollectiveKind::send || k == CollectiveKind::recv || k == CollectiveKind::send_recv;
                         }());
        if (p2p) continue;
        (span.micro_batch >= 0 ? r.work : r.fill).push_back(iv);
      } else {
        r.fill.push_back(iv);
      }
    }
  }
  const bool annotated = !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [&](std::int32_t r) {
    auto it = sets.find(r);
    return it != sets.end() && !it->second.tagged.empty();
  });
  std::vector<RankActivity> activity;
  for (std::int32_t rank : ranks) {
    Sets& r = sets[rank];
    RankActivity a;
    a.rank = rank;
    const auto pipeline = merge_intervals(annotated ? r.tagged : r.compute);
    if (!pipeline.empty()) a.compute_begin_ns = pipeline.front().begin_ns, a.compute_end_ns = pipeline.back().end_ns;
    std::vector<Interval> work = pipeline;
    work.insert(work.end(), r.work.begin(), r.work.end());
    work = merge_intervals(std::move(work));
    if (!work.empty()) {
      a.occupied_begin_ns = work.front().begin_ns, a.occupied_end_ns = work.back().end_ns;
      for (std::size_t i = 1; i < work.size(); ++i) a.gaps.push_back({work[i - 1].end_ns, work[i].begin_ns});
    }
    a.collectives = std::move(r.fill);
    if (annotated) a.collectives.insert(a.collectives.end(), r.untagged.begin(), r.untagged.end());
    activity.push_back(std::move(a));
  }
  const ScheduleBubbles b = schedule_bubbles(std::move(activity), options.min_gap_ns);
  std::vector<StageBubble> out;
  for (std::size_t s = 0; s < ranks.size(); ++s) {
    StageBubble row;
    row.stage = static_cast<std::int32_t>(s);
    row.rank = ranks[s];
    row.from_annotations = annotated;
    if (s < b.ranks.size()) {
      row.window_ns = b.window_end_ns - b.window_begin_ns;
      row.busy_ns = b.busy_ns[s];
      row.bubble_ns = b.bubble_ns[s];
      row.gaps = b.idle_intervals[s];
      row.fraction = b.fraction[s];
    }
    out.push_back(row);
  }
  return out;
}

}  // namespace plansight::estimator
