// RankContext: the rank's groups (Megatron-LM's initialize_model_parallel: tensor groups of
// consecutive ranks, data groups across them, pipeline groups across both; the embedding group
// joins the first and last pipeline stage for the tied word embeddings) and traced transfers.
#include "rank_context.h"

#include <optional>

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

runtime::SpanInfo comm_span(est::SpanKind kind, est::Phase phase, int stage, int mb, std::size_t bytes) {
  runtime::SpanInfo s;
  s.lane = est::Lane::communication;
  s.kind = kind;
  s.phase = phase;
  s.stage = stage;
  s.micro_batch = mb;
  s.bytes = static_cast<double>(bytes);
  return s;
}

runtime::Element element(Elem e) {
  switch (e) {
    case Elem::bf16: return runtime::Element::bf16;
    case Elem::f16: return runtime::Element::f16;
    case Elem::f32: break;
    case Elem::i32: throw RankFailure("int32 arrays are never communicated");
  }
  return runtime::Element::f32;
}

}  // namespace

void check(const runtime::Status& status) {
  if (!status) throw RankFailure(status.error_text());
}

RankContext::RankContext(const ProbeConfig& config, int world_rank, runtime::Tracer* tracer_in,
                         std::unique_ptr<Backend> backend)
    : cfg(config), rank(world_rank), at(config.coords(world_rank)), tracer(tracer_in), backend_owner(std::move(backend)),
      be(*backend_owner), memory(be.memory()) {}

runtime::Status RankContext::connect(RunDevice& device, runtime::Communicator& world_comm) {
  const int tp_n = cfg.tp, dp_n = cfg.dp, pp_n = cfg.pp;
  auto take = [](Result<std::unique_ptr<runtime::Communicator>>&& r, std::unique_ptr<runtime::Communicator>& out) {
    if (!r) return runtime::Status(r.errors());
    out = std::move(*r);
    return runtime::ok_status();
  };
  auto split = [&](int colour, int key, const char* name, bool gradient_queue) {
    return device.split(world_comm, colour, key, name, be, gradient_queue);
  };
  // Colours identify the other two coordinates; keys order the group by its own coordinate.
  if (auto s = take(split(at.dp + dp_n * at.pp, at.tp, "tp", false), tp); !s) return s;
  if (auto s = take(split(at.tp + tp_n * at.pp, at.dp, "dp", false), dp); !s) return s;
  if (auto s = take(split(at.tp + tp_n * at.pp, at.dp, "dp-grad", true), dp_grad); !s) return s;
  if (auto s = take(split(at.tp + tp_n * at.dp, at.pp, "pp", false), pp); !s) return s;
  const bool in_embedding = cfg.dims.tied && pp_n > 1 && (first_stage() || last_stage());
  if (auto s = take(split(in_embedding ? at.tp + tp_n * at.dp : -1, at.pp, "embedding", false), embedding); !s) return s;
  return runtime::ok_status();
}

runtime::ScopedSpan RankContext::compute(const char* name, est::Phase phase, int stage, int micro_batch, double flops) const {
  runtime::SpanInfo s;
  s.phase = phase;
  s.stage = stage;
  s.micro_batch = micro_batch;
  s.flops = flops;
  return runtime::ScopedSpan(tracer, rank, name, s);
}

void RankContext::all_reduce(runtime::Communicator& comm, void* data, std::size_t count, Elem elem, const char* name,
                             est::Phase phase, int stage, int micro_batch) const {
  if (comm.size() == 1) return;
  runtime::ScopedSpan span(tracer, rank, name, comm_span(est::SpanKind::collective, phase, stage, micro_batch, count * elem_bytes(elem)));
  check(comm.all_reduce_typed(data, count, element(elem)));
}

void RankContext::all_gather(runtime::Communicator& comm, const void* in, void* out, std::size_t count, Elem elem,
                             const char* name, est::Phase phase, int stage, int micro_batch) const {
  if (comm.size() == 1) {
    if (in != out) be.copy(out, in, count * elem_bytes(elem), Queue::compute);  // no span on the communication lane
    return;
  }
  runtime::ScopedSpan span(tracer, rank, name, comm_span(est::SpanKind::collective, phase, stage, micro_batch,
                                                         count * static_cast<std::size_t>(comm.size()) * elem_bytes(elem)));
  check(comm.all_gather_typed(in, out, count, element(elem)));
}

void RankContext::send_recv_group(const std::vector<PeerTransfer>& sends, const std::vector<PeerTransfer>& recvs) const {
  std::vector<runtime::PeerSend> wire_sends;
  std::vector<runtime::PeerRecv> wire_recvs;
  for (const PeerTransfer& s : sends) wire_sends.push_back({s.data, s.count, element(s.elem), s.peer, s.tag});
  for (const PeerTransfer& r : recvs) wire_recvs.push_back({r.data, r.count, element(r.elem), r.peer, r.tag});
  // One span open at a time: the hook opens transfer i's span when it is handed to the library
  // and closes it after, so consecutive spans on the lane never overlap.
  std::optional<runtime::ScopedSpan> span;
  auto hook = [&](std::size_t i, bool starting) {
    if (!starting) {
      span.reset();
      return;
    }
    const bool is_recv = i >= sends.size();
    const PeerTransfer& t = is_recv ? recvs[i - sends.size()] : sends[i];
    span.emplace(tracer, rank, is_recv ? "pp.recv" : "pp.send",
                 comm_span(is_recv ? est::SpanKind::recv : est::SpanKind::send, t.phase, t.stage, t.micro_batch,
                           t.count * elem_bytes(t.elem)));
  };
  check(pp->send_recv_group(wire_sends, wire_recvs, hook));
}

}  // namespace plansight::probe
