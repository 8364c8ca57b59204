// Communicator: collectives and point-to-point transfers between the ranks of a probe run.
// On the CPU (and for virtual ranks on one GPU) ranks are threads of one process and the
// communicator moves real data between their buffers; on several GPUs an NCCL implementation
// provides the same interface. Every call is made by all members of the group (collectives) or
// by the matching pair (send/recv); calls return an error instead of hanging when a peer has
// failed or the run was cancelled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime {

// Success, or what failed (a peer's error, cancellation, a size mismatch).
using Status = Result<bool>;
inline Status ok_status() { return true; }

// What a typed transfer moves: fp32, or the 16-bit compute copies of mixed-precision training
// (bf16, fp16), which tensor-parallel all-reduces and pipeline sends move as they are (Megatron-
// LM reduces activations in the compute type).
enum class Element : std::uint8_t { f32, bf16, f16 };
constexpr std::size_t element_bytes(Element e) { return e == Element::f32 ? 4 : 2; }
constexpr const char* element_name(Element e) {
  return e == Element::f32 ? "fp32" : e == Element::bf16 ? "bf16" : "fp16";
}

// One transfer of a point-to-point group (Communicator::send_recv_group): `count` elements of
// type `element` to or from group rank `peer`, matched by `tag` where the library matches tags.
struct PeerSend {
  const void* data = nullptr;
  std::size_t count = 0;
  Element element = Element::f32;
  int peer = 0;
  int tag = 0;
};
struct PeerRecv {
  void* data = nullptr;
  std::size_t count = 0;
  Element element = Element::f32;
  int peer = 0;
  int tag = 0;
};
// Called just before (`starting`) and just after each transfer of a group is handed to the
// library (numbered as send_recv_group says): a caller brackets each transfer with its own trace
// span, so consecutive spans stay one per message.
using TransferHook = std::function<void(std::size_t transfer, bool starting)>;

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;  // within this group
  virtual int size() const = 0;
  virtual const std::string& name() const = 0;  // "tp", "dp", "pp", "world", ...
  // Whether a call only enqueues its work on a device stream and returns without waiting on the
  // host for the other ranks (NCCL). Work on such a communicator overlaps other work by its
  // stream; issuing it from a second host thread would break NCCL's rule that the operations on
  // several communicators be issued in the same order on every rank (NCCL User Guide, "Using
  // multiple NCCL communicators concurrently"). The in-process, MPI and device communicators
  // wait on the host (false).
  virtual bool enqueues_only() const { return false; }

  // Sum over ranks, in place; every rank ends with the same values.
  virtual Status all_reduce(float* data, std::size_t count) = 0;
  // `in` holds size() * count values; rank r receives the sum of every rank's block r in `out`.
  virtual Status reduce_scatter(const float* in, float* out, std::size_t count) = 0;
  // Rank r contributes `count` values; every rank receives all size() * count values in rank order.
  virtual Status all_gather(const float* in, float* out, std::size_t count) = 0;
  virtual Status broadcast(float* data, std::size_t count, int root) = 0;
  // Point to point. A recv matches the oldest unreceived send from `peer` with the same tag
  // (MPI's non-overtaking rule per (source, destination, tag)); on the CPU and device
  // communicators sends never wait for the receiver. NCCL ignores the tag (a pair's messages
  // match in call order) and its sends wait on the device for the receiver: code that must run
  // on every communicator sends and receives through send_recv_group() below.
  virtual Status send(const float* data, std::size_t count, int peer, int tag = 0) = 0;
  virtual Status recv(float* data, std::size_t count, int peer, int tag = 0) = 0;

  // The same for `count` elements of type `element`. fp32 calls the functions above; 16-bit
  // types fail, naming the communicator, unless an implementation moves them (the GPU ones).
  virtual Status all_reduce_typed(void* data, std::size_t count, Element element);
  virtual Status all_gather_typed(const void* in, void* out, std::size_t count, Element element);
  virtual Status send_typed(const void* data, std::size_t count, Element element, int peer, int tag);
  virtual Status recv_typed(void* data, std::size_t count, Element element, int peer, int tag);

  // Every send of `sends` and every receive of `recvs` (each in order) as one group that
  // progresses together. NCCL's ncclSend/ncclRecv hold the device stream until the peer's
  // matching call runs, so a send and a receive that must overlap (1F1B's "send activation,
  // receive gradient") deadlock when issued one after the other; fused between ncclGroupStart
  // and ncclGroupEnd they progress independently (NCCL User Guide, "Point-to-point
  // communication"; Megatron-LM's p2p_communication batches them the same way). Here sends never
  // wait for their receiver, so the default issues send_typed() for each send, then recv_typed()
  // for each receive, and stops at the first failure. `hook` (may be empty) brackets each
  // transfer: i < sends.size() is sends[i], then recvs[i - sends.size()].
  virtual Status send_recv_group(const std::vector<PeerSend>& sends, const std::vector<PeerRecv>& recvs,
                                 const TransferHook& hook = {});
};

// Ranks as threads of one process. world(n) makes the world group; split() makes sub-groups
// (all ranks of the parent call it together; ranks with the same colour form a group, ordered
// by key), as MPI_Comm_split does.
class InProcessWorld {
 public:
  explicit InProcessWorld(int world_size);
  ~InProcessWorld();
  InProcessWorld(const InProcessWorld&) = delete;
  InProcessWorld& operator=(const InProcessWorld&) = delete;

  int size() const;
  std::unique_ptr<Communicator> world(int rank);
  // Fails every pending and future call with `reason` (a rank failed, or the run was cancelled).
  void abort(const std::string& reason);

  struct Impl;
 private:
  std::shared_ptr<Impl> impl_;
};

// A negative colour takes no part (MPI_UNDEFINED): that rank gets a null communicator. Fails
// when `parent` is not an in-process communicator or a peer failed.
Result<std::unique_ptr<Communicator>> split(Communicator& parent, int colour, int key, const std::string& name);

}  // namespace plansight::runtime
