// RankContext: what one rank thread owns — its backend (memory, kernels, queues), its
// communicators (world, tp, dp, pp, the tied-embedding group of the first and last stage, and a
// second dp communicator for its gradient thread) and its tracer hooks. Failures inside a step throw RankFailure;
// the rank's thread turns it into the run's error at the run_probe() boundary.
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.h"
#include "plansight/runtime/communicator.h"
#include "plansight/runtime/memory_tracker.h"
#include "plansight/probe/run_device.h"
#include "plansight/runtime/tracer.h"
#include "probe_config.h"

namespace plansight::probe {

class GradSync;

// A failed collective or transfer inside a step (a peer failed, or the run was aborted).
class RankFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws RankFailure when `status` failed.
void check(const runtime::Status& status);

// One point-to-point transfer of the rank and what its span names: `count` elements of `elem`
// from `data` (a send) or into it (a receive), with pp-group rank `peer`.
struct PeerTransfer {
  void* data = nullptr;
  std::size_t count = 0;
  Elem elem = Elem::f32;
  int peer = 0;
  int tag = 0;
  int stage = -1;  // the global chunk of the op that sends or receives it
  int micro_batch = -1;
  estimator::Phase phase = estimator::Phase::none;
};

struct RankContext {
  RankContext(const ProbeConfig& config, int world_rank, runtime::Tracer* tracer, std::unique_ptr<Backend> backend);

  // Splits the world into the groups this rank belongs to; every rank calls it once.
  runtime::Status connect(RunDevice& device, runtime::Communicator& world_comm);

  const ProbeConfig& cfg;
  const int rank;  // world rank
  const RankCoords at;
  runtime::Tracer* tracer;  // null: no spans
  // Multiplies the loss gradient (fp16's dynamic loss scale; 1 otherwise), set before each step.
  float loss_scale = 1.0f;
  const std::unique_ptr<Backend> backend_owner;
  Backend& be;
  runtime::MemoryTracker& memory;  // the backend's
  GradSync* grad_sync = nullptr;
  // ZeRO-2/3: the transient full gradients submitted for reduce-scatter, oldest first. Only the
  // compute thread frees them, once their reduction tasks ran: in the gradient queue's order
  // (ParamUnit::begin_backward: all but the newest), or after the step's grad->compute fence
  // (all). The reduction tasks never own them: on a GPU a task is done once its work is
  // enqueued, and a buffer freed then in the compute stream's order could be reused there while
  // the reduce-scatter (or a peer on the same GPU) still reads it. Two are held in the steady state (the estimator's double
  // buffer); three where two units' backwards nest (the LM head's and the final norm's, the
  // embeddings'), on every backend alike.
  std::deque<std::shared_ptr<Buf>> grad_staging;

  std::unique_ptr<runtime::Communicator> world, tp, dp, pp, dp_grad;
  std::unique_ptr<runtime::Communicator> embedding;  // first + last stage, only when the head is tied and pp > 1

  bool first_stage() const { return at.pp == 0; }
  bool last_stage() const { return at.pp == cfg.pp - 1; }

  // A span on this rank's compute lane; `flops` of the GEMMs it ran.
  runtime::ScopedSpan compute(const char* name, estimator::Phase phase, int stage, int micro_batch, double flops = 0) const;
  // A collective on `comm` from this (compute) thread, recorded on the communication lane;
  // `count` elements of type `elem` (the compute type for activations, fp32 for statistics).
  void all_reduce(runtime::Communicator& comm, void* data, std::size_t count, Elem elem, const char* name,
                  estimator::Phase phase, int stage, int micro_batch) const;
  void all_gather(runtime::Communicator& comm, const void* in, void* out, std::size_t count, Elem elem,
                  const char* name, estimator::Phase phase, int stage, int micro_batch) const;
  // Pipeline sends and receives on the pp communicator as one group that progresses together
  // (Communicator::send_recv_group: on NCCL one ncclGroupStart/End). Each transfer is its own
  // span on the communication lane ("pp.send" / "pp.recv", with its chunk and micro-batch); on
  // NCCL the group's kernel launches inside the last one's span.
  void send_recv_group(const std::vector<PeerTransfer>& sends, const std::vector<PeerTransfer>& recvs) const;
};

}  // namespace plansight::probe
