// mark_peer_ready(): collectives matched by (name, stage, micro-batch, phase) and call order,
// receives by their sends.
#include "plansight/estimator/peer_waiting.h"

#include <algorithm>
#include <climits>
#include <tuple>

namespace plansight::estimator {
namespace {
// Stages up to this are indexed directly by the no-peer check (a pipeline has at most thousands).
constexpr std::int32_t kMaxIndexedStage = 1 << 16;
}  // namespace

void mark_peer_ready(std::vector<CommunicationCall>& calls) {
  // Collectives grouped by one flat sort (key, then rank, then start) rather than a map of maps:
  // an edit in the app reads every collective of the predicted timeline (thousands, each with
  // no peer), where the maps' allocations were a quarter of the timeline's metrics.
  struct Entry {
    std::int32_t name, stage, micro_batch;
    Phase phase;
    std::int32_t rank;
    std::int64_t start;
    CommunicationCall* call;
    bool same_key(const Entry& o) const {
      return name == o.name && stage == o.stage && micro_batch == o.micro_batch && phase == o.phase;
    }
  };
  std::vector<Entry> entries;
  std::vector<const CommunicationCall*> sends;
  for (auto& c : calls) {
    c.ready_ns = c.span->start_ns;
    if (c.span->kind == SpanKind::send) sends.push_back(&c);
    if (c.span->kind != SpanKind::collective) continue;
    const Span& s = *c.span;
    entries.push_back({s.name_id, s.stage, s.micro_batch, s.phase, c.rank, s.start_ns, &c});
  }
  // A collective's peers share its stage: when no stage has calls on two ranks (a predicted
  // timeline draws one rank per stage), no call has a peer and the grouping is skipped.
  bool shared_stage = false;
  {
    std::vector<std::int32_t> rank_of_stage;  // by stage + 1 (stage -1: none); -1 while unseen
    for (const Entry& e : entries) {
      if (e.stage < -1 || e.stage >= kMaxIndexedStage) {  // an odd trace's stage: group in full
        shared_stage = true;
        break;
      }
      const auto at = static_cast<std::size_t>(e.stage + 1);
      if (at >= rank_of_stage.size()) rank_of_stage.resize(at + 1, -1);
      if (rank_of_stage[at] == -1) rank_of_stage[at] = e.rank;
      if (rank_of_stage[at] != e.rank) {
        shared_stage = true;
        break;
      }
    }
  }
  if (!shared_stage) entries.clear();
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.name, a.stage, a.micro_batch, a.phase, a.rank, a.start) <
           std::tie(b.name, b.stage, b.micro_batch, b.phase, b.rank, b.start);
  });
  std::vector<std::size_t> rank_begin;  // one key's ranks: where each one's calls begin
  for (std::size_t i = 0; i < entries.size();) {
    std::size_t end = i + 1;
    while (end < entries.size() && entries[end].same_key(entries[i])) ++end;
    rank_begin.clear();
    for (std::size_t j = i; j < end; ++j) {
      if (j == i || entries[j].rank != entries[j - 1].rank) rank_begin.push_back(j);
    }
    if (rank_begin.size() > 1) {  // a collective with peers: the k-th call of each rank is one
      rank_begin.push_back(end);
      for (std::size_t k = 0;; ++k) {
        std::int64_t ready = INT64_MIN;
        bool any = false;
        for (std::size_t r = 0; r + 1 < rank_begin.size(); ++r) {
          if (rank_begin[r] + k < rank_begin[r + 1]) ready = std::max(ready, entries[rank_begin[r] + k].start), any = true;
        }
        if (!any) break;
        for (std::size_t r = 0; r + 1 < rank_begin.size(); ++r) {
          if (rank_begin[r] + k < rank_begin[r + 1]) entries[rank_begin[r] + k].call->ready_ns = ready;
        }
      }
    }
    i = end;
  }
  for (auto& c : calls) {
    if (c.span->kind != SpanKind::recv) continue;
    const CommunicationCall* match = nullptr;
    for (const CommunicationCall* s : sends) {
      const Span& a = *s->span;
      if (s->rank == c.rank || a.micro_batch != c.span->micro_batch || a.phase != c.span->phase ||
          a.bytes != c.span->bytes || a.start_ns > c.span->end_ns()) {
        continue;
      }
      if (!match || a.start_ns > match->span->start_ns) match = s;
    }
    if (match) c.ready_ns = std::max(c.span->start_ns, match->span->start_ns);
  }
  for (auto& c : calls) c.ready_ns = std::clamp(c.ready_ns, c.span->start_ns, c.span->end_ns());
}

}  // namespace plansight::estimator
