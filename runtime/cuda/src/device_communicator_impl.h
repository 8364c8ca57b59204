// The Communicator of one virtual rank on a DeviceWorld (see device_communicator.h). Owns two
// events that it records alternately before each rendezvous: a peer waits on the event of round
// k before it can arrive at round k + 1, and the owner re-records that event only at round k + 2,
// which cannot start before every peer has arrived at k + 1, so no peer ever waits on a
// re-recorded event (cudaStreamWaitEvent waits on the record made before the call).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "device_world_impl.h"

namespace plansight::runtime::cuda {

class DeviceCommunicator final : public Communicator {
 public:
  // Creates the two events; errors name cudaEventCreateWithFlags.
  static Result<std::unique_ptr<DeviceCommunicator>> create(std::shared_ptr<DeviceWorld::Impl> world,
                                                            std::shared_ptr<DeviceGroup> group, int rank,
                                                            cudaStream_t stream);
  ~DeviceCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(group_->world_ranks.size()); }
  const std::string& name() const override { return group_->name; }

  Status all_reduce(float* data, std::size_t count) override;
  Status reduce_scatter(const float* in, float* out, std::size_t count) override;
  Status all_gather(const float* in, float* out, std::size_t count) override;
  Status broadcast(float* data, std::size_t count, int root) override;
  Status send(const float* data, std::size_t count, int peer, int tag = 0) override;
  Status recv(float* data, std::size_t count, int peer, int tag = 0) override;

  // The float functions above are these with Element::f32 (reduce_scatter and broadcast move
  // fp32 only). 16-bit all-reduces sum in fp32 in rank order and round once on store.
  Status all_reduce_typed(void* data, std::size_t count, Element element) override;
  Status all_gather_typed(const void* in, void* out, std::size_t count, Element element) override;
  Status send_typed(const void* data, std::size_t count, Element element, int peer, int tag) override;
  Status recv_typed(void* data, std::size_t count, Element element, int peer, int tag) override;

  cudaStream_t stream() const { return stream_; }
  const std::shared_ptr<DeviceWorld::Impl>& world() const { return world_; }
  const DeviceGroup& group() const { return *group_; }
  DeviceGroup& group() { return *group_; }
  int world_rank() const { return group_->world_ranks[static_cast<std::size_t>(rank_)]; }
  std::uint64_t next_split_sequence() { return split_sequence_++; }

 private:
  DeviceCommunicator(std::shared_ptr<DeviceWorld::Impl> world, std::shared_ptr<DeviceGroup> group, int rank,
                     cudaStream_t stream);
  // Records this rank's event, meets the group, and makes this stream wait for every other
  // member's event: afterwards all members' work before the phase is ordered before this
  // stream's next work. Returns the members' slots; checks that their element types, counts
  // (and roots) agree.
  Result<std::vector<PhaseSlot>> phase(const char* op, const void* ptr, std::size_t count, Element element,
                                       int root = -1);
  // A device-to-device copy of `bytes` on this stream (nothing when empty or dst == src).
  Status copy(void* dst, const void* src, std::size_t bytes, const char* op);
  // A failure inside a collective, after the group met: the others would wait for this rank at
  // the next phase, so the world is aborted with the failure as its reason.
  Status fail(Status status);

  std::shared_ptr<DeviceWorld::Impl> world_;
  std::shared_ptr<DeviceGroup> group_;
  int rank_;
  cudaStream_t stream_;
  cudaEvent_t events_[2] = {nullptr, nullptr};
  std::uint64_t rounds_ = 0;
  std::uint64_t split_sequence_ = 0;
};

}  // namespace plansight::runtime::cuda
