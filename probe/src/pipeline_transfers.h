// The pipeline's point-to-point messages, planned from the schedule table alone, for every rank
// at once: which message each op receives before it runs and sends after it, and the groups
// (Communicator::send_recv_group; one ncclGroupStart/End on NCCL) that carry them. On NCCL a
// send holds the device stream until its receiver posts the matching receive, so 1F1B's "send
// activation, then receive gradient" on one stage against "send gradient, then receive
// activation" on the next deadlocks unless both sit in one group on each side, as Megatron-LM's
// p2p_communication batches them. The plan: an op's send is deferred to the start of the
// rank's next op and goes out in one group with that op's receive (alone when it has none, so
// that GPipe's first stage still streams its activations), the last op's at the end of the
// step; where that alone would still leave every rank waiting (interleaved 1F1B), a receive is
// posted early, in the receiver's group that is waiting, as Megatron's interleaved schedule
// receives the next micro-batch's input and gradient ahead of its use. Pure, so tests check
// every schedule without running it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/pipeline_schedule.h"

namespace plansight::probe {

struct PipelineMessage {
  std::int32_t from = 0, to = 0;              // pipeline ranks (ranks of the "pp" group)
  std::int32_t from_chunk = 0, to_chunk = 0;  // global chunks: the sender's op and the receiver's op
  std::int32_t micro_batch = 0;
  bool backward = false;  // an input gradient (to the previous chunk); else an activation

  // (destination chunk, micro-batch, direction): matches on the tag-matching communicators
  // (MPI, in-process, device); NCCL ignores it and matches a pair's messages in call order.
  std::int32_t tag(std::int32_t chunks) const { return (micro_batch * chunks + to_chunk) * 2 + (backward ? 1 : 0); }
  friend bool operator==(const PipelineMessage&, const PipelineMessage&) = default;
};

// What op `op` on pipeline rank `rank` receives before it runs (an F its input activation, a B
// its output gradient) and sends after it (an F its output, a B its input gradient); none at
// the ends of the pipeline. Split-backward (W) ops move nothing.
struct OpMessages {
  std::optional<PipelineMessage> recv, send;
};
OpMessages op_messages(const estimator::ScheduleTable& table, int rank, const estimator::ScheduleOp& op);

// One call of Communicator::send_recv_group.
struct TransferGroup {
  std::vector<PipelineMessage> sends;  // deferred from earlier ops, oldest first
  // The input of the op that follows, when it has one, then inputs of later ops posted early.
  std::vector<PipelineMessage> recvs;
  bool empty() const { return sends.empty() && recvs.empty(); }
};

// A rank's groups for one step: before[i] is issued before op i of its row (empty: nothing),
// at_end after the last op.
struct TransferPlan {
  std::vector<TransferGroup> before;
  TransferGroup at_end;
};

// Every pipeline rank's plan (index: pipeline rank). Fails, naming layout.schedule, when a
// rank would receive a pair's messages in another order than their sender sends them (NCCL
// would hand each to the wrong receive: every message has the same size) or when no grouping
// lets the ranks progress with every send waiting for its receiver.
Result<std::vector<TransferPlan>> plan_transfers(const estimator::ScheduleTable& table);

}  // namespace plansight::probe
