// NcclWorld and the NCCL Communicator (nccl_communicator.h). Every ncclResult_t is checked and
// reported with ncclGetErrorString and, where a communicator exists, ncclGetLastError's detail.
#include "plansight/runtime/cuda/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "cuda_status.h"

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
  std::mutex mutex;
  std::vector<ncclComm_t> comms;          // every live communicator, for abort()
  std::vector<ncclComm_t> aborted_comms;  // freed by ncclCommAbort: never ncclCommDestroy them
  bool aborted = false;
  std::string reason;

  void add(ncclComm_t comm) {
    std::lock_guard lock(mutex);
    comms.push_back(comm);
  }
  // Unregisters `comm`; false when abort() has already freed it.
  bool remove(ncclComm_t comm) {
    std::lock_guard lock(mutex);
    comms.erase(std::remove(comms.begin(), comms.end(), comm), comms.end());
    return std::find(aborted_comms.begin(), aborted_comms.end(), comm) == aborted_comms.end();
  }
};

namespace {

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(std::shared_ptr<NcclWorld::Impl> world, ncclComm_t comm, std::string name, int rank, int size,
                   cudaStream_t stream)
      : world_(std::move(world)), comm_(comm), name_(std::move(name)), rank_(rank), size_(size), stream_(stream) {
    world_->add(comm_);
  }
  ~NcclCommunicator() override {
    if (world_->remove(comm_)) ncclCommDestroy(comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }

  Status all_reduce(float* data, std::size_t count) override { return all_reduce_typed(data, count, Element::f32); }
  Status reduce_scatter(const float* in, float* out, std::size_t count) override {
    if (auto s = healthy("ncclReduceScatter"); !s) return s;
    return nccl_check(ncclReduceScatter(in, out, count, ncclFloat, ncclSum, comm_, stream_), where("ncclReduceScatter"),
                      comm_);
  }
  Status all_gather(const float* in, float* out, std::size_t count) override {
    return all_gather_typed(in, out, count, Element::f32);
  }
  Status broadcast(float* data, std::size_t count, int root) override {
    if (root < 0 || root >= size_) {
      return make_error("communicator", "broadcast root " + std::to_string(root) + " in group \"" + name_ +
                                            "\"; valid: 0.." + std::to_string(size_ - 1));
    }
    if (auto s = healthy("ncclBroadcast"); !s) return s;
    return nccl_check(ncclBroadcast(data, data, count, ncclFloat, root, comm_, stream_), where("ncclBroadcast"), comm_);
  }
  Status send(const float* data, std::size_t count, int peer, int tag) override {
    return send_typed(data, count, Element::f32, peer, tag);
  }
  Status recv(float* data, std::size_t count, int peer, int tag) override {
    return recv_typed(data, count, Element::f32, peer, tag);
  }

  Status all_reduce_typed(void* data, std::size_t count, Element element) override {
    if (auto s = healthy("ncclAllReduce"); !s) return s;
    return nccl_check(ncclAllReduce(data, data, count, nccl_type(element), ncclSum, comm_, stream_),
                      where("ncclAllReduce"), comm_);
  }
  Status all_gather_typed(const void* in, void* out, std::size_t count, Element element) override {
    if (auto s = healthy("ncclAllGather"); !s) return s;
    return nccl_check(ncclAllGather(in, out, count, nccl_type(element), comm_, stream_), where("ncclAllGather"), comm_);
  }
  Status send_typed(const void* data, std::size_t count, Element element, int peer, int tag) override {
    if (auto s = check_peer(peer, tag, "send to"); !s) return s;
    if (auto s = healthy("ncclSend"); !s) return s;
    return nccl_check(ncclSend(data, count, nccl_type(element), peer, comm_, stream_), where("ncclSend"), comm_);
  }
  Status recv_typed(void* data, std::size_t count, Element element, int peer, int tag) override {
    if (auto s = check_peer(peer, tag, "recv from"); !s) return s;
    if (auto s = healthy("ncclRecv"); !s) return s;
    return nccl_check(ncclRecv(data, count, nccl_type(element), peer, comm_, stream_), where("ncclRecv"), comm_);
  }

  ncclComm_t comm() const { return comm_; }
  cudaStream_t stream() const { return stream_; }
  const std::shared_ptr<NcclWorld::Impl>& world() const { return world_; }

 private:
  std::string where(const char* call) const { return std::string(call) + " (\"" + name_ + "\", rank " + std::to_string(rank_) + ")"; }

  // An earlier asynchronous failure (or an abort) is reported before anything new is enqueued.
  Status healthy(const char* call) const {
    {
      std::lock_guard lock(world_->mutex);
      if (world_->aborted) return make_error("communicator", "aborted: " + world_->reason);
    }
    ncclResult_t async = ncclSuccess;
    if (auto s = nccl_check(ncclCommGetAsyncError(comm_, &async), where("ncclCommGetAsyncError"), comm_); !s) return s;
    if (async != ncclSuccess && async != ncclInProgress) {
      return nccl_failure(async, where(call) + ": an earlier operation failed", comm_);
    }
    return ok_status();
  }

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
  ncclComm_t comm_;
  std::string name_;
  int rank_, size_;
  cudaStream_t stream_;
};

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
  if (auto s = nccl_check(ncclCommInitRank(&comm, size(), impl_->id, rank),
                          "ncclCommInitRank(rank " + std::to_string(rank) + " of " + std::to_string(size()) + ")");
      !s) {
    return s.errors();
  }
  return std::unique_ptr<Communicator>(std::make_unique<NcclCommunicator>(impl_, comm, "world", rank, size(), stream));
}

void NcclWorld::abort(const std::string& reason) {
  std::vector<ncclComm_t> comms;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->aborted) return;
    impl_->aborted = true;
    impl_->reason = reason;
    comms = impl_->comms;
    impl_->aborted_comms = comms;
  }
  for (ncclComm_t comm : comms) ncclCommAbort(comm);
}

bool is_nccl_communicator(const Communicator& communicator) {
  return dynamic_cast<const NcclCommunicator*>(&communicator) != nullptr;
}

Result<std::unique_ptr<Communicator>> split_nccl(Communicator& parent, int colour, int key, const std::string& name,
                                                 cudaStream_t stream) {
  auto* nccl = dynamic_cast<NcclCommunicator*>(&parent);
  if (nccl == nullptr) return make_error("communicator", "split_nccl() of \"" + parent.name() + "\": not an NCCL communicator");
  ncclComm_t child = nullptr;
  if (auto s = nccl_check(ncclCommSplit(nccl->comm(), colour < 0 ? NCCL_SPLIT_NOCOLOR : colour, key, &child, nullptr),
                          "ncclCommSplit(\"" + parent.name() + "\" -> \"" + name + "\")", nccl->comm());
      !s) {
    return s.errors();
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
  return std::unique_ptr<Communicator>(std::make_unique<NcclCommunicator>(
      nccl->world(), child, name, rank, size, stream != nullptr ? stream : nccl->stream()));
}

}  // namespace plansight::runtime::cuda
