// run_schedule(): a (chunk, micro-batch) keeps its activations from its F to its B, so the
// measured activation peak follows the schedule's in-flight count (Narayanan et al. 2021,
// Sec. 2.2). Sends copy into the receiver's mailbox and never block, so any valid table runs
// without deadlock; a message is matched by (sender, tag = destination chunk, micro-batch,
// direction), whatever order the neighbour produces it in.
#include "pipeline_executor.h"

#include <map>
#include <stdexcept>

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

int tag_of(int global_chunk, int micro_batch, int chunks, bool backward) {
  return (micro_batch * chunks + global_chunk) * 2 + (backward ? 1 : 0);
}

}  // namespace

void run_schedule(RankContext& ctx, std::vector<std::unique_ptr<ModelChunk>>& chunks, const DataLoader& data,
                    std::int64_t step) {
  const est::ScheduleTable& table = ctx.cfg.schedule;
  const int G = table.stages();
  const auto n = static_cast<std::size_t>(ctx.cfg.dims.N()) * ctx.cfg.dims.C;
  std::map<std::pair<int, int>, ChunkActs> in_flight;
  std::vector<int> backwards_done(chunks.size(), 0);
  const Elem e = ctx.be.act();
  std::vector<std::int32_t> inputs, targets;
  // A micro-batch's int32 tokens in the backend's memory (the host data loader's output).
  auto tokens = [&](const std::vector<std::int32_t>& host) {
    Buf b(ctx.be, runtime::MemoryCategory::activations, host.size(), Elem::i32);
    ctx.be.upload(b.data(), host.data(), host.size() * sizeof(std::int32_t));
    return b;
  };
  for (const est::ScheduleOp& op : table.ranks[static_cast<std::size_t>(ctx.at.pp)]) {
    ModelChunk& chunk = *chunks[static_cast<std::size_t>(op.chunk)];
    const int g = chunk.global(), mb = op.micro_batch;
    if (op.kind == est::OpKind::forward) {
      ChunkActs a;
      if (chunk.first() || chunk.last()) {
        data.micro_batch(step, ctx.at.dp, mb, inputs, targets);
        if (chunk.first()) a.tokens = tokens(inputs);
        if (chunk.last()) a.targets = tokens(targets);
      }
      if (!chunk.first()) {
        a.input = Buf(ctx.be, runtime::MemoryCategory::activations, n, e);
        ctx.recv(a.input.data(), n, e, table.rank_of(g - 1), tag_of(g, mb, G, false), g, mb, est::Phase::forward);
      }
      chunk.forward(a, mb);
      if (!chunk.last()) {
        ctx.send(chunk.output(a), n, e, table.rank_of(g + 1), tag_of(g + 1, mb, G, false), g, mb, est::Phase::forward);
      }
      in_flight.emplace(std::make_pair(op.chunk, mb), std::move(a));
    } else if (op.kind == est::OpKind::backward) {
      auto it = in_flight.find({op.chunk, mb});
      if (it == in_flight.end()) throw RankFailure("schedule runs B before F for chunk " + std::to_string(g) + " micro-batch " + std::to_string(mb));
      ChunkActs a = std::move(it->second);
      in_flight.erase(it);
      Buf dout;
      if (!chunk.last()) {
        // The pipeline's receive buffer (the estimator's p2p buffer), not a stored activation.
        dout = Buf(ctx.be, runtime::MemoryCategory::buffers, n, e);
        ctx.recv(dout.data(), n, e, table.rank_of(g + 1), tag_of(g, mb, G, true), g, mb, est::Phase::backward);
      }
      const bool last_micro_batch = ++backwards_done[static_cast<std::size_t>(op.chunk)] == table.m;
      Buf dx = chunk.backward(a, dout.data(), mb, last_micro_batch);
      if (!chunk.first()) ctx.send(dx.data(), n, e, table.rank_of(g - 1), tag_of(g - 1, mb, G, true), g, mb, est::Phase::backward);
    } else {
      throw RankFailure("the probe has no split-backward (W) ops");
    }
  }
}

}  // namespace plansight::probe
