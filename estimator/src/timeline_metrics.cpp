// Per-rank breakdown, overlap, idle gaps and pipeline bubbles by interval sweeps over a Timeline.
#include "plansight/estimator/timeline_metrics.h"

#include <algorithm>
#include <limits>
#include <map>

#include "plansight/estimator/hta_metrics.h"
#include "plansight/estimator/kernel_rules.h"

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

std::map<std::int32_t, ClassSets> collect(const Timeline& timeline, const std::vector<KernelClass>& classes) {
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
        case KernelClass::communication: sets.communication.push_back(iv); break;
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
  std::vector<RankBreakdown> out;
  for (auto& [rank, sets] : collect(timeline, classes)) {
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
    row.exposed_communication_ns = row.communication_ns - row.overlap_ns;
    row.memory_ns = total_length(merge_intervals(std::move(sets.memory)));
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
  // Annotated mode only when every stage has tagged pipeline work; a half-tagged pipeline would
  // compare tagged and untagged busy sets.
  std::map<std::int32_t, std::vector<Interval>> tagged, compute, device;
  for (const auto& track : timeline.tracks) {
    for (const auto& span : track.spans) {
      if (!is_device_work(track, span)) continue;
      const Interval iv{span.start_ns, span.end_ns()};
      device[track.rank].push_back(iv);
      if (!is_compute(span_class(span, classes))) continue;
      compute[track.rank].push_back(iv);
      if (is_pipeline_phase(span.phase)) tagged[track.rank].push_back(iv);
    }
  }
  const bool annotated = !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [&](std::int32_t r) {
    auto it = tagged.find(r);
    return it != tagged.end() && !it->second.empty();
  });
  auto& source = annotated ? tagged : compute;
  std::int64_t begin = std::numeric_limits<std::int64_t>::max(), end = std::numeric_limits<std::int64_t>::min();
  for (std::int32_t r : ranks) {
    const auto merged = merge_intervals(source[r]);
    if (!merged.empty()) {
      begin = std::min(begin, merged.front().begin_ns);
      end = std::max(end, merged.back().end_ns);
    }
  }
  std::vector<StageBubble> out;
  for (std::size_t s = 0; s < ranks.size(); ++s) {
    StageBubble row;
    row.stage = static_cast<std::int32_t>(s);
    row.rank = ranks[s];
    row.from_annotations = annotated;
    // Gaps in all of the rank's device work (communication is not bubble: a stage inside a
    // transfer is moving data, and HTA's trace_filter example counted 1.02 s of bubble against
    // 675 ms idle that way), inside the pipeline's window clipped to the rank's own device
    // window, so that a stage's bubble never exceeds the idle time of its row of the breakdown.
    const auto busy = merge_intervals(device[ranks[s]]);
    if (end > begin && !busy.empty()) {
      const std::int64_t b = std::max(begin, busy.front().begin_ns), e = std::min(end, busy.back().end_ns);
      if (e > b) {
        row.window_ns = e - b;
        row.busy_ns = total_length(clip(merge_intervals(source[ranks[s]]), b, e));
        const auto gaps = gaps_of(busy, b, e, options.min_gap_ns);
        row.bubble_ns = total_length(gaps);
        row.gaps = static_cast<std::int32_t>(gaps.size());
        row.fraction = double(row.bubble_ns) / double(row.window_ns);
      }
    }
    out.push_back(row);
  }
  return out;
}

}  // namespace plansight::estimator
