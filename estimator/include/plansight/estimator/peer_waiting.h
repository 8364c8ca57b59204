// The one rule for the part of a communication call spent waiting for a peer, shared by every
// metric that reports communication (timeline_metrics.h's exposed communication, the compare
// views' step phases), so that `analyze`, `compare` and the app's pages read a run alike.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// One communication call of a timeline (a collective, a send or a receive, or a kernel the
// caller counts as communication) and when its data could start moving.
struct CommunicationCall {
  std::int32_t rank = 0;
  const Span* span = nullptr;
  std::int64_t ready_ns = 0;  // set by mark_peer_ready(); before it, the rank waits for a peer
};

// Sets each call's ready_ns. A blocking call's time before its last peer arrived is waiting, not
// communication (on a CPU a peer is often late because ranks share cores; on GPUs one rank's
// NCCL kernel starts before the others reach the collective). Collectives: the k-th call with
// the same name, stage, micro-batch and phase on each rank is one collective, ready when its last
// member started it. Receives: ready when the matching send (same micro-batch, phase and bytes on
// another rank, the latest one started before the receive ended) started. A call with no peer
// in the timeline (a predicted timeline draws one rank per stage) is ready at its start. Always
// within [start, end].
void mark_peer_ready(std::vector<CommunicationCall>& calls);

}  // namespace plansight::estimator
