// Virtual ranks on one GPU: ranks are threads, each with its own CUDA stream, and the
// runtime::Communicator interface moves device memory between them with device-to-device copies
// and a reduction kernel, ordered across streams with events (no NCCL needed, any GPU count >= 1).
//
// Semantics, the same as the in-process communicator's but on device memory: every pointer is
// device memory of the world's device; a call enqueues its copies and kernels on the
// communicator's stream and returns once they are enqueued, so results are ready for later work
// on that stream. Collectives meet their group's other members on the host first (a rendezvous
// that exchanges buffer pointers and events), so a collective call blocks its thread until every
// member has made it. Sends are eager (the data is copied into a staging buffer on the sender's
// stream and the send returns); a recv waits for the matching send on the host, then orders its
// copy after the sender's with an event. abort() fails every pending and later call.
//
// All-reduce is a direct reduce-scatter (each rank sums its chunk from all ranks' buffers, in rank
// order, so sums are bit-identical on every rank) then an all-gather of the chunks: the device
// equivalent of the ring algorithm's two halves (Patarasuk & Yuan 2009), with the GPU's memory
// system instead of a ring of links. Groups hold at most 64 ranks.
//
// The typed all-reduce, all-gather, send and recv also move bf16 and fp16: transfers copy bytes
// exactly, and a 16-bit all-reduce sums in fp32 in rank order and rounds once on store (round to
// nearest even). Members must agree on the element type; a mismatch fails naming both types.
#pragma once

#include <memory>
#include <string>

#include "plansight/estimator/diagnostic.h"
#include "plansight/kernels/cuda/status.h"
#include "plansight/runtime/communicator.h"

namespace plansight::runtime::cuda {

class DeviceWorld {
 public:
  DeviceWorld(int world_size, int device);
  ~DeviceWorld();
  DeviceWorld(const DeviceWorld&) = delete;
  DeviceWorld& operator=(const DeviceWorld&) = delete;

  int size() const;
  int device() const;

  // The world group's communicator of `rank`, enqueuing on `stream`. One per rank: for another
  // stream, split_device() it with one colour.
  Result<std::unique_ptr<Communicator>> world(int rank, cudaStream_t stream);

  // Fails every pending and future call with `reason` (a rank failed, or the run was cancelled).
  void abort(const std::string& reason);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// MPI_Comm_split for device communicators (runtime::split's rules: all members call together;
// ranks with the same colour form a group ordered by key; a negative colour gets null). The new
// communicator enqueues on `stream`, or on the parent's when null. Fails when `parent` is not a
// device communicator.
Result<std::unique_ptr<Communicator>> split_device(Communicator& parent, int colour, int key, const std::string& name,
                                                   cudaStream_t stream = nullptr);

// Whether `communicator` is a device communicator (from a DeviceWorld or split_device).
bool is_device_communicator(const Communicator& communicator);

// The stream a device communicator enqueues on; null for other communicators.
cudaStream_t stream_of(const Communicator& communicator);

}  // namespace plansight::runtime::cuda
