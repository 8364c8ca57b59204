// Private state of a DeviceWorld: groups (each with its rendezvous for collective phases and for
// splits), one mailbox per world rank for point-to-point messages, the registry of split groups,
// and the abort flag. See device_communicator.h for the protocol.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "plansight/runtime/cuda/device_communicator.h"
#include "plansight/runtime/cuda/rendezvous.h"

namespace plansight::runtime::cuda {

// What a member brings to one collective phase: its buffer, the event recorded on its stream
// after the work the others must wait for, and its element count and type (checked to agree).
struct PhaseSlot {
  const void* ptr = nullptr;
  cudaEvent_t event = nullptr;
  std::size_t count = 0;
  Element element = Element::f32;
  int root = -1;
  const char* op = "";  // the collective ("all_reduce", ...): members calling different ones are an error
};

struct SplitSlot {
  int colour = -1;
  int key = 0;
};

struct DeviceGroup {
  DeviceGroup(std::uint64_t group_id, std::string group_name, std::vector<int> ranks)
      : id(group_id), name(std::move(group_name)), world_ranks(std::move(ranks)),
        phases(static_cast<int>(world_ranks.size())), splits(static_cast<int>(world_ranks.size())) {}
  ~DeviceGroup() {
    for (cudaEvent_t event : retired) cudaEventDestroy(event);
  }
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;
  std::uint64_t id;
  std::string name;
  std::vector<int> world_ranks;  // index: rank within the group
  Rendezvous<PhaseSlot> phases;
  Rendezvous<SplitSlot> splits;
  // The phase events of members that have gone (~DeviceCommunicator): a slower member may still
  // be about to wait on the event a faster one recorded for the group's last collective, so the
  // events live as long as the group, which every member's communicator holds.
  std::mutex retired_mutex;
  std::vector<cudaEvent_t> retired;
};

// An eager message: the sender's copy of the data (`count` elements of `element`) in a staging
// buffer (cudaMallocAsync on the sender's stream), ready once `ready` has completed; the receiver
// frees both.
struct DeviceMessage {
  void* staging = nullptr;
  std::size_t count = 0;
  Element element = Element::f32;
  cudaEvent_t ready = nullptr;
};

// Queue key at the receiver: group, sender's rank in the group, tag.
using DeviceMessageKey = std::tuple<std::uint64_t, int, int>;

struct DeviceMailbox {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<DeviceMessageKey, std::deque<DeviceMessage>> queues;
};

struct DeviceWorld::Impl {
  Impl(int world_size, int world_device);
  ~Impl();  // frees messages never received

  int size;
  int device;
  std::vector<std::unique_ptr<DeviceMailbox>> mailboxes;  // by world rank
  std::shared_ptr<DeviceGroup> world_group;

  std::atomic<bool> aborted{false};
  std::mutex mutex;  // abort_reason, groups, split_groups
  std::string abort_reason;
  std::vector<std::weak_ptr<DeviceGroup>> groups;  // every group, for abort()
  std::map<std::tuple<std::uint64_t, std::uint64_t, int>, std::shared_ptr<DeviceGroup>> split_groups;
  std::uint64_t next_group_id = 1;  // 0 is the world

  Status abort_status();
  void abort(const std::string& reason);
  // The group of colour `colour` of the `sequence`-th split of `parent` (made once, shared).
  std::shared_ptr<DeviceGroup> split_group(const DeviceGroup& parent, std::uint64_t sequence, int colour,
                                           const std::vector<SplitSlot>& slots, const std::string& name);
  void post(int world_rank, const DeviceMessageKey& key, DeviceMessage message);
  Result<DeviceMessage> take(int world_rank, const DeviceMessageKey& key);
};

}  // namespace plansight::runtime::cuda
