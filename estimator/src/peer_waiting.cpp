// mark_peer_ready(): collectives matched by (name, stage, micro-batch, phase) and call order,
// receives by their sends.
#include "plansight/estimator/peer_waiting.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

namespace plansight::estimator {

void mark_peer_ready(std::vector<CommunicationCall>& calls) {
  using Key = std::tuple<std::int32_t, std::int32_t, std::int32_t, Phase>;
  std::map<Key, std::map<std::int32_t, std::vector<CommunicationCall*>>> collectives;
  std::vector<const CommunicationCall*> sends;
  for (auto& c : calls) {
    c.ready_ns = c.span->start_ns;
    if (c.span->kind == SpanKind::send) sends.push_back(&c);
    if (c.span->kind != SpanKind::collective) continue;
    collectives[{c.span->name_id, c.span->stage, c.span->micro_batch, c.span->phase}][c.rank].push_back(&c);
  }
  for (auto& [key, by_rank] : collectives) {
    std::size_t count = 0;
    for (auto& [rank, list] : by_rank) {
      std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->span->start_ns < b->span->start_ns; });
      count = std::max(count, list.size());
    }
    for (std::size_t k = 0; k < count; ++k) {
      std::int64_t ready = INT64_MIN;
      for (auto& [rank, list] : by_rank) if (k < list.size()) ready = std::max(ready, list[k]->span->start_ns);
      for (auto& [rank, list] : by_rank) if (k < list.size()) list[k]->ready_ns = ready;
    }
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
