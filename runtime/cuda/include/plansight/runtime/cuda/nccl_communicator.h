// The runtime::Communicator interface on NCCL, for real multi-GPU runs: one thread per GPU in
// one process (NcclWorld), each rank's operations enqueued on its stream. Collectives map one to
// one (ncclAllReduce, ncclReduceScatter, ncclAllGather, ncclBroadcast on fp32 sums; the typed
// all-reduce, all-gather, send and recv also in ncclBfloat16 and ncclFloat16); sub-groups come
// from ncclCommSplit. Two differences from the in-process communicator, both NCCL's:
//   - point to point matches sends and receives between a pair in call order; the tag is not
//     sent (ranks must post in the same order), and a send completes on its stream only when the
//     receiver's recv runs, so two ranks that both send before they receive deadlock on the
//     device: send_recv_group() fuses sends and receives in one ncclGroupStart/End group, as
//     Megatron-LM's p2p_communication batches them (the probe's plan of which transfers share a
//     group: probe/src/pipeline_transfers.h);
//   - calls return when enqueued; errors inside NCCL (a peer died) surface as
//     ncclCommGetAsyncError at the next call, and abort() aborts every communicator;
//   - one thread at a time operates a communicator (NCCL User Guide, "Thread Safety"): every
//     call holds its lock, and abort() from another thread (MPI's failure hook) aborts each
//     communicator at once or, when a thread is inside a call on it, lets that thread abort it
//     as the call returns (comm_guard.h). A call blocked on the host inside NCCL (a peer that
//     died during connection setup) is not interrupted.
// Several ranks per GPU need NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1 (nccl_version.h);
// otherwise each rank needs its own GPU, which world() checks before NCCL would fail.
// Several processes (mpirun/srun, one GPU each): rank 0 makes the unique id (nccl_unique_id()),
// the launcher's MPI hands it to every process, and each joins the world with its own rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/kernels/cuda/status.h"
#include "plansight/runtime/communicator.h"
#include "plansight/runtime/cuda/nccl_version.h"

namespace plansight::runtime::cuda {

// The NCCL library's version (ncclGetVersion; no GPU needed) and whether it can put several
// ranks on one GPU in this environment.
struct NcclRuntime {
  NcclVersion version;     // of the loaded library
  NcclVersion built_with;  // of the nccl.h this was compiled against
  MultiRankGpu multi_rank_gpu;
};
Result<NcclRuntime> nccl_runtime();

// A new ncclUniqueId as its NCCL_UNIQUE_ID_BYTES bytes (ncclGetUniqueId; no GPU needed).
Result<std::string> nccl_unique_id();

class NcclWorld {
 public:
  // A world of `devices.size()` ranks, rank r on GPU devices[r] (ncclGetUniqueId). Fails when two
  // ranks share a GPU and this NCCL cannot (the message says why).
  static Result<std::shared_ptr<NcclWorld>> create(const std::vector<int>& devices);
  // This process's part of a world spread over processes: world rank `rank` of `size` on GPU
  // `device`, joining the world of `unique_id` (nccl_unique_id() of rank 0, handed to every
  // process by the launcher's MPI). world() then works for `rank` only.
  static Result<std::shared_ptr<NcclWorld>> join(const std::string& unique_id, int rank, int size, int device);
  ~NcclWorld();
  NcclWorld(const NcclWorld&) = delete;
  NcclWorld& operator=(const NcclWorld&) = delete;

  int size() const;
  int device_of(int rank) const;

  // Called by every rank's thread at the same time (ncclCommInitRank blocks until all ranks have
  // joined); makes the rank's device current on the calling thread.
  Result<std::unique_ptr<Communicator>> world(int rank, cudaStream_t stream);

  // ncclCommAbort on every communicator of this world (pending operations return errors), from
  // any thread; later calls fail with `reason`.
  void abort(const std::string& reason);

  struct Impl;

 private:
  NcclWorld() = default;
  std::shared_ptr<Impl> impl_;
};

// Whether `communicator` is an NCCL communicator (from an NcclWorld or split_nccl).
bool is_nccl_communicator(const Communicator& communicator);

// ncclCommSplit of an NCCL communicator (runtime::split's rules; a negative colour gets null).
// `stream` null: the parent's stream. Fails when `parent` is not an NCCL communicator.
Result<std::unique_ptr<Communicator>> split_nccl(Communicator& parent, int colour, int key, const std::string& name,
                                                 cudaStream_t stream = nullptr);

}  // namespace plansight::runtime::cuda
