// Shared-offset and collective-end alignment of ranks.
#include "plansight/estimator/timeline_align.h"

#include <algorithm>
#include <limits>
#include <map>

#include "plansight/estimator/timeline_metrics.h"

namespace plansight::estimator {
namespace {

struct Anchor {
  std::int64_t end_ns;
  CollectiveKind kind;
  std::string name;
};

}  // namespace

Alignment compute_alignment(const Timeline& timeline, const AlignOptions& options, const KernelClassifier& classifier) {
  Alignment out;
  out.mode = options.mode;
  std::map<std::int32_t, std::int64_t> begin_of_rank;
  for (const auto& t : timeline.tracks) {
    for (const auto& s : t.spans) {
      auto [it, fresh] = begin_of_rank.try_emplace(t.rank, s.start_ns);
      if (!fresh) it->second = std::min(it->second, s.start_ns);
    }
  }
  if (begin_of_rank.empty()) return out;

  std::map<std::int32_t, std::int64_t> offset;
  std::map<std::int32_t, bool> anchored;
  for (const auto& [rank, begin] : begin_of_rank) offset[rank] = 0;

  if (options.mode == AlignMode::collective_end) {
    const auto classes = classify_names(timeline, classifier);
    std::map<std::int32_t, std::vector<const Span*>> comm;
    for (const auto& t : timeline.tracks) {
      for (const auto& s : t.spans) {
        if (t.lane != Lane::host && s.kind != SpanKind::annotation && s.kind != SpanKind::idle &&
            span_class(s, classes) == KernelClass::communication) {
          comm[t.rank].push_back(&s);
        }
      }
    }
    std::map<std::int32_t, Anchor> anchors;
    for (auto& [rank, spans] : comm) {
      std::stable_sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) { return a->start_ns < b->start_ns; });
      const auto n = static_cast<std::int64_t>(spans.size());
      const std::int64_t i = options.collective_index < 0 ? n + options.collective_index : options.collective_index;
      if (i < 0 || i >= n) continue;
      const Span* s = spans[static_cast<std::size_t>(i)];
      const std::string& name = timeline.name_of(*s);
      anchors[rank] = {s->end_ns(), collective_kind_from_name(name), name};
    }
    if (!anchors.empty()) {
      const auto& [ref_rank, ref] = *anchors.begin();
      for (const auto& [rank, a] : anchors) {
        offset[rank] = ref.end_ns - a.end_ns;
        anchored[rank] = true;
        if (a.kind != ref.kind) {
          out.warnings.push_back(make_warning(
              "rank " + std::to_string(rank),
              "anchor collective \"" + a.name + "\" differs in kind from rank " + std::to_string(ref_rank) + "'s \"" +
                  ref.name + "\"; the ranks may have run different collectives at that index"));
        }
      }
    }
    // Ranks without the anchor keep their clock relative to the reference rank's.
    for (const auto& [rank, begin] : begin_of_rank) {
      if (!anchored[rank]) {
        offset[rank] = anchors.empty() ? 0 : offset[anchors.begin()->first];
        out.warnings.push_back(make_warning("rank " + std::to_string(rank),
                                            "has no communication span at index " +
                                                std::to_string(options.collective_index) +
                                                "; given the reference rank's offset"));
      }
    }
  }

  // Shared part: move the earliest aligned event to 0.
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (const auto& [rank, begin] : begin_of_rank) earliest = std::min(earliest, begin + offset[rank]);
  for (const auto& [rank, begin] : begin_of_rank) {
    out.offsets.push_back({rank, offset[rank] - earliest, anchored[rank]});
  }
  return out;
}

void apply_alignment(Timeline& timeline, const Alignment& alignment) {
  std::map<std::int32_t, std::int64_t> offset;
  for (const auto& o : alignment.offsets) offset[o.rank] = o.offset_ns;
  for (auto& t : timeline.tracks) {
    auto it = offset.find(t.rank);
    if (it == offset.end()) continue;
    for (auto& s : t.spans) s.start_ns += it->second;
  }
}

}  // namespace plansight::estimator
