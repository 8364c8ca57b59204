// RankContext: the rank's groups (Megatron-LM's initialize_model_parallel: tensor groups of
// consecutive ranks, data groups across them, pipeline groups across both; the embedding group
// joins the first and last pipeline stage for the tied word embeddings) and traced transfers.
#include "rank_context.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

runtime::SpanInfo comm_span(est::SpanKind kind, est::Phase phase, int stage, int mb, std::size_t count) {
  runtime::SpanInfo s;
  s.lane = est::Lane::communication;
  s.kind = kind;
  s.phase = phase;
  s.stage = stage;
  s.micro_batch = mb;
  s.bytes = static_cast<double>(count * sizeof(float));
  return s;
}

}  // namespace

void check(const runtime::Status& status) {
  if (!status) throw RankFailure(status.error_text());
}

RankContext::RankContext(const ProbeConfig& config, int world_rank, runtime::Tracer* tracer_in)
    : cfg(config), rank(world_rank), at(config.coords(world_rank)), tracer(tracer_in) {}

runtime::Status RankContext::connect(runtime::Communicator& world_comm) {
  const int tp_n = cfg.tp, dp_n = cfg.dp, pp_n = cfg.pp;
  auto take = [](Result<std::unique_ptr<runtime::Communicator>>&& r, std::unique_ptr<runtime::Communicator>& out) {
    if (!r) return runtime::Status(r.errors());
    out = std::move(*r);
    return runtime::ok_status();
  };
  // Colours identify the other two coordinates; keys order the group by its own coordinate.
  if (auto s = take(runtime::split(world_comm, at.dp + dp_n * at.pp, at.tp, "tp"), tp); !s) return s;
  if (auto s = take(runtime::split(world_comm, at.tp + tp_n * at.pp, at.dp, "dp"), dp); !s) return s;
  if (auto s = take(runtime::split(world_comm, at.tp + tp_n * at.pp, at.dp, "dp-grad"), dp_grad); !s) return s;
  if (auto s = take(runtime::split(world_comm, at.tp + tp_n * at.dp, at.pp, "pp"), pp); !s) return s;
  const bool in_embedding = cfg.dims.tied && pp_n > 1 && (first_stage() || last_stage());
  if (auto s = take(runtime::split(world_comm, in_embedding ? at.tp + tp_n * at.dp : -1, at.pp, "embedding"), embedding); !s) return s;
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

void RankContext::all_reduce(runtime::Communicator& comm, float* data, std::size_t count, const char* name,
                             est::Phase phase, int stage, int micro_batch) const {
  if (comm.size() == 1) return;
  runtime::ScopedSpan span(tracer, rank, name, comm_span(est::SpanKind::collective, phase, stage, micro_batch, count));
  check(comm.all_reduce(data, count));
}

void RankContext::all_gather(runtime::Communicator& comm, const float* in, float* out, std::size_t count,
                             const char* name, est::Phase phase, int stage, int micro_batch) const {
  if (comm.size() == 1) {
    check(comm.all_gather(in, out, count));  // a local copy: no span on the communication lane
    return;
  }
  runtime::ScopedSpan span(tracer, rank, name, comm_span(est::SpanKind::collective, phase, stage, micro_batch, count * static_cast<std::size_t>(comm.size())));
  check(comm.all_gather(in, out, count));
}

void RankContext::send(const float* data, std::size_t count, int peer, int tag, int stage, int micro_batch, est::Phase phase) const {
  runtime::ScopedSpan span(tracer, rank, "pp.send", comm_span(est::SpanKind::send, phase, stage, micro_batch, count));
  check(pp->send(data, count, peer, tag));
}

void RankContext::recv(float* data, std::size_t count, int peer, int tag, int stage, int micro_batch, est::Phase phase) const {
  runtime::ScopedSpan span(tracer, rank, "pp.recv", comm_span(est::SpanKind::recv, phase, stage, micro_batch, count));
  check(pp->recv(data, count, peer, tag));
}

}  // namespace plansight::probe
