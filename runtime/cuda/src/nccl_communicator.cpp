// NcclWorld and the NCCL Communicator (nccl_communicator.h). Every ncclResult_t is checked and
// reported with ncclGetErrorString and, where a communicator exists, ncclGetLastError's detail.
// Every call on a communicator, its async-error check included, runs under its CommGuard: one
// thread at a time (NCCL User Guide, "Thread Safety"), and abort() never frees it under a user.
#include "plansight/runtime/cuda/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>

#include "cuda_status.h"
#include "plansight/runtime/cuda/comm_guard.h"

namespace plansight::runtime::cuda {
namespace {

Diagnostic nccl_failure(ncclResult_t result, const std::string& call, ncclComm_t comm = nullptr) {
  std::string message = call + ": " + ncclGetErrorString(result);
  const char* detail = ncclGetLastError(comm);
  if (detail != nullptr && detail[0] != '\0') message += " (" + std::string(detail) + ")";
  return make_error("nccl", message);
}

Status nccl_check(ncclResult_t result, const std::string& call, ncclComm_t comm = nullptr) {
  if (result == ncclSuccess) return ok_status();
  return nccl_failure(result, call, comm);
}

// NCCL's type for a transfer's elements (ncclBfloat16 since NCCL 2.10). NCCL sums 16-bit
// all-reduces in its own order and precision: equal on every rank, not necessarily equal to the
// device communicator's fp32 sum rounded once.
ncclDataType_t nccl_type(Element element) {
  switch (element) {
    case Element::f32: return ncclFloat32;
    case Element::bf16: return ncclBfloat16;
    case Element::f16: return ncclFloat16;
  }
  return ncclFloat32;
}

}  // namespace

struct NcclWorld::Impl {
  ncclUniqueId id{};
  std::vector<int> devices;
  std::mutex mutex;                              // guards the members below
  std::vector<std::shared_ptr<CommGuard>> comms;  // every live communicator's guard, for abort()
  bool aborted = false;
  std::string reason;

  // Registers a new communicator; false when the world was aborted already (the caller aborts it).
  bool add(std::shared_ptr<CommGuard> guard) {
    std::lock_guard lock(mutex);
    if (aborted) return false;
    comms.push_back(std::move(guard));
    return true;
  }
  void remove(const CommGuard* guard) {
    std::lock_guard lock(mutex);
    std::erase_if(comms, [&](const std::shared_ptr<CommGuard>& g) { return g.get() == guard; });
  }
  Status aborted_status() {
    std::lock_guard lock(mutex);
    return make_error("communicator", "aborted: " + reason);
  }
  // Aborts every communicator (NcclWorld::abort).
  void abort(const std::string& why);
};

namespace {

// The guard of a new communicator: ncclCommAbort when the world is aborted (from any thread),
// ncclCommDestroy when the communicator is closed normally.
std::shared_ptr<CommGuard> make_guard(ncclComm_t comm) {
  return std::make_shared<CommGuard>([comm] { ncclCommAbort(comm); }, [comm] { ncclCommDestroy(comm); });
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(std::shared_ptr<NcclWorld::Impl> world, std::shared_ptr<CommGuard> guard, ncclComm_t comm,
                   std::string name, int rank, int size, cudaStream_t stream)
      : world_(std::move(world)), guard_(std::move(guard)), comm_(comm), name_(std::move(name)), rank_(rank),
        size_(size), stream_(stream) {}
  ~NcclCommunicator() override {
    world_->remove(guard_.get());
    guard_->close();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }
  bool enqueues_only() const override { return true; }

  Status all_reduce(float* data, std::size_t count) override { return all_reduce_typed(data, count, Element::f32); }
  Status reduce_scatter(const float* in, float* out, std::size_t count) override {
    return enqueue("ncclReduceScatter", [&] {
      return nccl_check(ncclReduceScatter(in, out, count, ncclFloat, ncclSum, comm_, stream_), where("ncclReduceScatter"),
                        comm_);
    });
  }
  Status all_gather(const float* in, float* out, std::size_t count) override {
    return all_gather_typed(in, out, count, Element::f32);
  }
  Status broadcast(float* data, std::size_t count, int root) override {
    if (root < 0 || root >= size_) {
      return make_error("communicator", "broadcast root " + std::to_string(root) + " in group \"" + name_ +
                                            "\"; valid: 0.." + std::to_string(size_ - 1));
    }
    return enqueue("ncclBroadcast", [&] {
      return nccl_check(ncclBroadcast(data, data, count, ncclFloat, root, comm_, stream_), where("ncclBroadcast"), comm_);
    });
  }
  Status send(const float* data, std::size_t count, int peer, int tag) override {
    return send_typed(data, count, Element::f32, peer, tag);
  }
  Status recv(float* data, std::size_t count, int peer, int tag) override {
    return recv_typed(data, count, Element::f32, peer, tag);
  }

  Status all_reduce_typed(void* data, std::size_t count, Element element) override {
    return enqueue("ncclAllReduce", [&] {
      return nccl_check(ncclAllReduce(data, data, count, nccl_type(element), ncclSum, comm_, stream_),
                        where("ncclAllReduce"), comm_);
    });
  }
  Status all_gather_typed(const void* in, void* out, std::size_t count, Element element) override {
    return enqueue("ncclAllGather", [&] {
      return nccl_check(ncclAllGather(in, out, count, nccl_type(element), comm_, stream_), where("ncclAllGather"), comm_);
    });
  }
  // A lone send or receive: each holds the stream until its peer's matching call runs (pipeline
  // code uses send_recv_group).
  Status send_typed(const void* data, std::size_t count, Element element, int peer, int tag) override {
    if (auto s = check_peer(peer, tag, "send to"); !s) return s;
    return enqueue("ncclSend", [&] {
      return nccl_check(ncclSend(data, count, nccl_type(element), peer, comm_, stream_), where("ncclSend"), comm_);
    });
  }
  Status recv_typed(void* data, std::size_t count, Element element, int peer, int tag) override {
    if (auto s = check_peer(peer, tag, "recv from"); !s) return s;
    return enqueue("ncclRecv", [&] {
      return nccl_check(ncclRecv(data, count, nccl_type(element), peer, comm_, stream_), where("ncclRecv"), comm_);
    });
  }
  // The sends and the receives between ncclGroupStart and ncclGroupEnd, so that they progress
  // independently (NCCL User Guide, "Point-to-point communication": calls that must progress
  // concurrently are fused in one group; those to one peer run in call order). Nothing is
  // enqueued before ncclGroupEnd, which the last transfer's hook brackets: the group's kernel
  // launches inside that transfer's span (NVTX range), a receive's when there is one.
  Status send_recv_group(const std::vector<PeerSend>& sends, const std::vector<PeerRecv>& recvs,
                         const TransferHook& hook) override {
    for (const PeerSend& s : sends) {
      if (auto st = check_peer(s.peer, s.tag, "send to"); !st) return st;
    }
    for (const PeerRecv& r : recvs) {
      if (auto st = check_peer(r.peer, r.tag, "recv from"); !st) return st;
    }
    const std::size_t transfers = sends.size() + recvs.size();
    if (transfers == 0) return ok_status();
    return enqueue("ncclGroupEnd", [&]() -> Status {
      if (auto st = nccl_check(ncclGroupStart(), where("ncclGroupStart"), comm_); !st) return st;
      Status status = ok_status();
      std::size_t i = 0;
      for (; i < transfers && status; ++i) {
        if (hook) hook(i, true);
        if (i < sends.size()) {
          const PeerSend& s = sends[i];
          status = nccl_check(ncclSend(s.data, s.count, nccl_type(s.element), s.peer, comm_, stream_), where("ncclSend"),
                              comm_);
        } else {
          const PeerRecv& r = recvs[i - sends.size()];
          status = nccl_check(ncclRecv(r.data, r.count, nccl_type(r.element), r.peer, comm_, stream_), where("ncclRecv"),
                              comm_);
        }
        if (hook && status && i + 1 < transfers) hook(i, false);
      }
      // Every ncclGroupStart is closed, also after a failed call inside the group (NCCL then
      // drops the group's operations); the first failure is the one reported. The transfer
      // whose hook is still open (the last, or the one that failed) closes after it.
      Status ended = nccl_check(ncclGroupEnd(), where("ncclGroupEnd"), comm_);
      if (hook) hook(i - 1, false);
      return status ? ended : status;
    });
  }

  ncclComm_t comm() const { return comm_; }
  cudaStream_t stream() const { return stream_; }
  const std::shared_ptr<NcclWorld::Impl>& world() const { return world_; }

  // Runs `call` (an NCCL call on this communicator) as the only thread operating it; an abort
  // or an earlier asynchronous failure is reported before anything new is enqueued.
  // A failure aborts the world: a communicator that reported an error must be freed with
  // ncclCommAbort, never ncclCommDestroy, which first flushes pending work and blocks for ever
  // when a peer is gone (NCCL User Guide, "Asynchronous errors and error handling").
  Status enqueue(const char* call, const std::function<Status()>& nccl_call) {
    auto done = guard_->use([&]() -> Status {
      ncclResult_t async = ncclSuccess;
      if (auto s = nccl_check(ncclCommGetAsyncError(comm_, &async), where("ncclCommGetAsyncError"), comm_); !s) return s;
      if (async != ncclSuccess && async != ncclInProgress) {
        return nccl_failure(async, where(call) + ": an earlier operation failed", comm_);
      }
      return nccl_call();
    });
    if (!done) return world_->aborted_status();
    if (!*done) world_->abort(done->error_text());  // after use(): this thread no longer holds the guard
    return *done;
  }

 private:
  std::string where(const char* call) const { return std::string(call) + " (\"" + name_ + "\", rank " + std::to_string(rank_) + ")"; }

  Status check_peer(int peer, int tag, const char* what) const {
    if (peer < 0 || peer >= size_ || peer == rank_) {
      return make_error("communicator", std::string(what) + " peer " + std::to_string(peer) + " in group \"" + name_ +
                                            "\" of " + std::to_string(size_) + " ranks; valid: 0.." +
                                            std::to_string(size_ - 1) + " other than " + std::to_string(rank_));
    }
    if (tag < 0) return make_error("communicator", std::string(what) + " tag " + std::to_string(tag) + "; valid: >= 0");
    return ok_status();
  }

  std::shared_ptr<NcclWorld::Impl> world_;
  std::shared_ptr<CommGuard> guard_;
  ncclComm_t comm_;
  std::string name_;
  int rank_, size_;
  cudaStream_t stream_;
};

// Wraps a new communicator, registered for abort(); aborts it at once when the world was
// aborted while it was being made.
Result<std::unique_ptr<Communicator>> adopt(const std::shared_ptr<NcclWorld::Impl>& world, ncclComm_t comm,
                                            const std::string& name, int rank, int size, cudaStream_t stream) {
  auto guard = make_guard(comm);
  if (!world->add(guard)) {
    guard->abort();
    return world->aborted_status().errors();
  }
  return std::unique_ptr<Communicator>(std::make_unique<NcclCommunicator>(world, std::move(guard), comm, name, rank,
                                                                          size, stream));
}

}  // namespace

Result<NcclRuntime> nccl_runtime() {
  int code = 0;
  if (auto s = nccl_check(ncclGetVersion(&code), "ncclGetVersion"); !s) return s.errors();
  NcclRuntime runtime;
  runtime.version = decode_nccl_version(code);
  runtime.built_with = decode_nccl_version(NCCL_VERSION_CODE);
  runtime.multi_rank_gpu = multi_rank_gpu_support(runtime.version, std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"));
  return runtime;
}

Result<std::shared_ptr<NcclWorld>> NcclWorld::create(const std::vector<int>& devices) {
  if (devices.empty()) return make_error("nccl.devices", "no devices; valid: one device per rank");
  std::map<int, int> first_rank_on;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    auto [it, added] = first_rank_on.emplace(devices[r], static_cast<int>(r));
    if (added) continue;
    auto runtime = nccl_runtime();
    if (!runtime) return runtime.errors();
    if (!runtime->multi_rank_gpu.available) {
      return make_error("nccl.devices", "ranks " + std::to_string(it->second) + " and " + std::to_string(r) +
                                            " on GPU " + std::to_string(devices[r]) + ": " +
                                            runtime->multi_rank_gpu.reason +
                                            "; use the device communicator for several ranks on one GPU");
    }
  }
  std::shared_ptr<NcclWorld> world(new NcclWorld());
  world->impl_ = std::make_shared<Impl>();
  world->impl_->devices = devices;
  if (auto s = nccl_check(ncclGetUniqueId(&world->impl_->id), "ncclGetUniqueId"); !s) return s.errors();
  return world;
}

Result<std::string> nccl_unique_id() {
  ncclUniqueId id{};
  if (auto s = nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId"); !s) return s.errors();
  return std::string(id.internal, sizeof id.internal);
}

Result<std::shared_ptr<NcclWorld>> NcclWorld::join(const std::string& unique_id, int rank, int size, int device) {
  if (unique_id.size() != sizeof(ncclUniqueId::internal)) {
    return make_error("nccl.unique_id", std::to_string(unique_id.size()) + " bytes; an ncclUniqueId has " +
                                            std::to_string(sizeof(ncclUniqueId::internal)));
  }
  if (size < 1 || rank < 0 || rank >= size) {
    return make_error("nccl.rank", "rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                       "; valid: 0.." + std::to_string(size - 1));
  }
  if (device < 0) return make_error("nccl.device", "GPU " + std::to_string(device) + "; valid: >= 0");
  std::shared_ptr<NcclWorld> world(new NcclWorld());
  world->impl_ = std::make_shared<Impl>();
  world->impl_->devices.assign(static_cast<std::size_t>(size), -1);  // -1: a rank of another process
  world->impl_->devices[static_cast<std::size_t>(rank)] = device;
  std::copy(unique_id.begin(), unique_id.end(), world->impl_->id.internal);
  return world;
}

NcclWorld::~NcclWorld() = default;
int NcclWorld::size() const { return static_cast<int>(impl_->devices.size()); }
int NcclWorld::device_of(int rank) const { return impl_->devices.at(static_cast<std::size_t>(rank)); }

Result<std::unique_ptr<Communicator>> NcclWorld::world(int rank, cudaStream_t stream) {
  if (rank < 0 || rank >= size()) {
    return make_error("communicator", "world rank " + std::to_string(rank) + "; valid: 0.." + std::to_string(size() - 1));
  }
  if (device_of(rank) < 0) {
    return make_error("communicator", "world rank " + std::to_string(rank) + " runs in another process of this NCCL world");
  }
  if (auto s = cuda_check(cudaSetDevice(device_of(rank)), "cudaSetDevice(" + std::to_string(device_of(rank)) + ")"); !s) {
    return s.errors();
  }
  ncclComm_t comm = nullptr;
  const std::string call = "ncclCommInitRank(rank " + std::to_string(rank) + " of " + std::to_string(size()) + ")";
  if (const ncclResult_t result = ncclCommInitRank(&comm, size(), impl_->id, rank); result != ncclSuccess) {
    Diagnostic failure = nccl_failure(result, call);
    // NCCL refuses two ranks on one GPU as invalid usage ("Duplicate GPU detected"): processes
    // that each see one GPU (device 0) but share it, where no process alone can tell.
    if (result == ncclInvalidUsage) {
      failure.message += "; if several processes share one GPU: NCCL needs a GPU per rank (bind one per task, "
                         "e.g. srun --gpus-per-task=1), or run without a launcher for virtual ranks on one GPU";
    }
    return failure;
  }
  return adopt(impl_, comm, "world", rank, size(), stream);
}

// Called from any thread (the MPI progress thread's failure hook): each communicator is
// aborted now, or by the rank thread inside a call on it as that call returns (comm_guard.h), so
// none is freed under a thread that uses it.
void NcclWorld::abort(const std::string& reason) { impl_->abort(reason); }

void NcclWorld::Impl::abort(const std::string& why) {
  std::vector<std::shared_ptr<CommGuard>> live;
  {
    std::lock_guard lock(mutex);
    if (aborted) return;
    aborted = true;
    reason = why;
    live = comms;
  }
  for (const auto& guard : live) guard->abort();
}

bool is_nccl_communicator(const Communicator& communicator) {
  return dynamic_cast<const NcclCommunicator*>(&communicator) != nullptr;
}

Result<std::unique_ptr<Communicator>> split_nccl(Communicator& parent, int colour, int key, const std::string& name,
                                                 cudaStream_t stream) {
  auto* nccl = dynamic_cast<NcclCommunicator*>(&parent);
  if (nccl == nullptr) return make_error("communicator", "split_nccl() of \"" + parent.name() + "\": not an NCCL communicator");
  // ncclCommSplit operates the parent: under its lock, like every other call on it.
  ncclComm_t child = nullptr;
  Status split = nccl->enqueue("ncclCommSplit", [&] {
    return nccl_check(ncclCommSplit(nccl->comm(), colour < 0 ? NCCL_SPLIT_NOCOLOR : colour, key, &child, nullptr),
                      "ncclCommSplit(\"" + parent.name() + "\" -> \"" + name + "\")", nccl->comm());
  });
  if (!split) {
    if (child != nullptr) ncclCommAbort(child);
    return split.errors();
  }
  if (child == nullptr) return std::unique_ptr<Communicator>();
  int rank = 0, size = 0;
  if (auto s = nccl_check(ncclCommUserRank(child, &rank), "ncclCommUserRank", child); !s) {
    ncclCommDestroy(child);
    return s.errors();
  }
  if (auto s = nccl_check(ncclCommCount(child, &size), "ncclCommCount", child); !s) {
    ncclCommDestroy(child);
    return s.errors();
  }
  return adopt(nccl->world(), child, name, rank, size, stream != nullptr ? stream : nccl->stream());
}

}  // namespace plansight::runtime::cuda
