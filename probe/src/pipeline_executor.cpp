// run_schedule(): a (chunk, micro-batch) keeps its activations from its F to its B, so the
// measured activation peak follows the schedule's in-flight count (Narayanan et al. 2021,
// Sec. 2.2). Transfers go in the groups of the rank's TransferPlan (pipeline_transfers.h): an
// op's send is deferred and goes out with the next op's receive, because on NCCL a send holds
// the stream until its receiver posts and only a group lets a send and a receive progress
// together; a receive the plan posts early lands in a buffer kept until its op. A deferred
// send's buffer is kept until its group is issued. Messages carry a tag (destination chunk,
// micro-batch, direction) where the communicator matches tags; NCCL matches a pair's messages
// in call order instead, the same pairing, since plan_transfers refuses a table whose
// receivers post a pair's messages in another order than their sender sends them.
#include "pipeline_executor.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "pipeline_transfers.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

// The rank's transfers in flight between groups: sends deferred to the next group and
// receives posted before their op.
class Transfers {
 public:
  Transfers(RankContext& ctx, std::size_t count, Elem elem) : ctx_(ctx), count_(count), elem_(elem) {}

  // Defers a send to the next group; `owned` keeps a buffer nothing else holds (an input
  // gradient; an activation stays in its micro-batch's ChunkActs until its B).
  void defer(const PipelineMessage& m, const void* data, Buf owned = Buf()) {
    pending_.push_back({m, data, std::move(owned)});
  }

  // Issues `group`, whose sends must be the deferred ones in order. Its receive of `own` (the
  // op that follows) lands in `own_data`; any other receive in a buffer kept for its op. The
  // sends' buffers are released once the group is issued (on a GPU their frees are ordered on
  // the stream after the transfer).
  void issue(const TransferGroup& group, const std::optional<PipelineMessage>& own, void* own_data) {
    if (group.empty()) return;
    if (pending_.size() != group.sends.size()) throw RankFailure("pipeline transfers out of step with their plan");
    std::vector<PeerTransfer> sends, recvs;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (!(pending_[i].message == group.sends[i])) throw RankFailure("pipeline transfers out of step with their plan");
      sends.push_back(transfer(pending_[i].message, true, pending_[i].data));
    }
    for (const PipelineMessage& r : group.recvs) {
      void* data = own_data;
      if (!own || !(r == *own)) {
        // Kept in the memory category of what it becomes: an F's input activation, or the
        // pipeline's gradient buffer of a B. Unfilled: the receive writes all count_ elements.
        Buf early(ctx_.be, r.backward ? runtime::MemoryCategory::buffers : runtime::MemoryCategory::activations, count_,
                  elem_, Fill::none);
        data = early.data();
        early_.emplace(key(r), std::move(early));
      }
      recvs.push_back(transfer(r, false, data));
    }
    ctx_.send_recv_group(sends, recvs);
    pending_.clear();
  }

  // The buffer a receive posted early for `m` landed in.
  Buf take_early(const PipelineMessage& m) {
    auto it = early_.find(key(m));
    if (it == early_.end()) throw RankFailure("pipeline: no receive was posted for chunk " + std::to_string(m.to_chunk) +
                                              " micro-batch " + std::to_string(m.micro_batch));
    Buf b = std::move(it->second);
    early_.erase(it);
    return b;
  }

 private:
  struct Pending {
    PipelineMessage message;
    const void* data;
    Buf owned;
  };
  static std::tuple<int, int, bool> key(const PipelineMessage& m) { return {m.to_chunk, m.micro_batch, m.backward}; }

  PeerTransfer transfer(const PipelineMessage& m, bool sending, const void* data) const {
    PeerTransfer t;
    t.data = const_cast<void*>(data);  // a send only reads it
    t.count = count_;
    t.elem = elem_;
    t.peer = sending ? m.to : m.from;
    t.tag = m.tag(ctx_.cfg.schedule.stages());
    t.stage = sending ? m.from_chunk : m.to_chunk;
    t.micro_batch = m.micro_batch;
    t.phase = m.backward ? est::Phase::backward : est::Phase::forward;
    return t;
  }

  RankContext& ctx_;
  std::size_t count_;
  Elem elem_;
  std::vector<Pending> pending_;
  std::map<std::tuple<int, int, bool>, Buf> early_;
};

bool contains(const std::vector<PipelineMessage>& list, const std::optional<PipelineMessage>& m) {
  return m && std::find(list.begin(), list.end(), *m) != list.end();
}

}  // namespace

void run_schedule(RankContext& ctx, std::vector<std::unique_ptr<ModelChunk>>& chunks, const DataLoader& data,
                    std::int64_t step) {
  const est::ScheduleTable& table = ctx.cfg.schedule;
  const TransferPlan& plan = ctx.cfg.transfers.at(static_cast<std::size_t>(ctx.at.pp));
  const auto n = static_cast<std::size_t>(ctx.cfg.dims.N()) * ctx.cfg.dims.C;
  const Elem e = ctx.be.act();
  Transfers transfers(ctx, n, e);
  std::map<std::pair<int, int>, ChunkActs> in_flight;
  std::vector<int> backwards_done(chunks.size(), 0);
  std::vector<std::int32_t> inputs, targets;
  // A micro-batch's int32 tokens in the backend's memory (the host data loader's output).
  auto tokens = [&](const std::vector<std::int32_t>& host) {
    Buf b(ctx.be, runtime::MemoryCategory::activations, host.size(), Elem::i32, Fill::none);  // uploaded whole
    ctx.be.upload(b.data(), host.data(), host.size() * sizeof(std::int32_t));
    return b;
  };
  const auto& row = table.ranks[static_cast<std::size_t>(ctx.at.pp)];
  for (std::size_t i = 0; i < row.size(); ++i) {
    const est::ScheduleOp& op = row[i];
    const TransferGroup& group = plan.before.at(i);
    const OpMessages io = op_messages(table, ctx.at.pp, op);
    const bool received_now = contains(group.recvs, io.recv);
    ModelChunk& chunk = *chunks[static_cast<std::size_t>(op.chunk)];
    const int g = chunk.global(), mb = op.micro_batch;
    if (op.kind == est::OpKind::forward) {
      ChunkActs a;
      if (io.recv) {
        // Unfilled here and below: the group's receive writes all n elements before the op reads them.
        a.input = received_now ? Buf(ctx.be, runtime::MemoryCategory::activations, n, e, Fill::none)
                               : transfers.take_early(*io.recv);
      }
      transfers.issue(group, io.recv, a.input.data());
      if (chunk.first() || chunk.last()) {
        data.micro_batch(step, ctx.at.dp, mb, inputs, targets);
        if (chunk.first()) a.tokens = tokens(inputs);
        if (chunk.last()) a.targets = tokens(targets);
      }
      chunk.forward(a, mb);
      // The output stays in `a` (in flight until this micro-batch's B, after the send went out).
      if (io.send) transfers.defer(*io.send, chunk.output(a));
      in_flight.emplace(std::make_pair(op.chunk, mb), std::move(a));
    } else if (op.kind == est::OpKind::backward) {
      auto it = in_flight.find({op.chunk, mb});
      if (it == in_flight.end()) throw RankFailure("schedule runs B before F for chunk " + std::to_string(g) + " micro-batch " + std::to_string(mb));
      ChunkActs a = std::move(it->second);
      in_flight.erase(it);
      // The pipeline's receive buffer (the estimator's p2p buffer), not a stored activation.
      Buf dout;
      if (io.recv) {
        dout = received_now ? Buf(ctx.be, runtime::MemoryCategory::buffers, n, e, Fill::none) : transfers.take_early(*io.recv);
      }
      transfers.issue(group, io.recv, dout.data());
      const bool last_micro_batch = ++backwards_done[static_cast<std::size_t>(op.chunk)] == table.m;
      Buf dx = chunk.backward(a, dout.data(), mb, last_micro_batch);
      if (io.send) {
        const void* dx_data = dx.data();
        transfers.defer(*io.send, dx_data, std::move(dx));
      }
    } else {
      throw RankFailure("the probe has no split-backward (W) ops");
    }
  }
  transfers.issue(plan.at_end, std::nullopt, nullptr);
}

}  // namespace plansight::probe
