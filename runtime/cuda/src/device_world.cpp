// DeviceWorld: groups, mailboxes, abort and split (device_world_impl.h). split_device follows
// MPI_Comm_split as runtime::split does: members meet with (colour, key); a colour's members form
// a group ordered by (key, parent rank); the group object is made once per (parent, split call,
// colour) and shared, so all its members meet in the same rendezvous.
#include <algorithm>

#include "cuda_status.h"
#include "device_communicator_impl.h"
#include "reduce_kernels.h"

namespace plansight::runtime::cuda {

DeviceWorld::Impl::Impl(int world_size, int world_device) : size(world_size), device(world_device) {
  for (int r = 0; r < size; ++r) mailboxes.push_back(std::make_unique<DeviceMailbox>());
  std::vector<int> ranks(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  world_group = std::make_shared<DeviceGroup>(0, "world", std::move(ranks));
  groups.push_back(world_group);
}

DeviceWorld::Impl::~Impl() {
  for (auto& box : mailboxes) {
    for (auto& [key, queue] : box->queues) {
      for (DeviceMessage& m : queue) {
        if (m.ready != nullptr) cudaEventSynchronize(m.ready);
        if (m.staging != nullptr) cudaFree(m.staging);
        if (m.ready != nullptr) cudaEventDestroy(m.ready);
      }
    }
  }
}

Status DeviceWorld::Impl::abort_status() {
  std::lock_guard lock(mutex);
  return make_error("communicator", "aborted: " + abort_reason);
}

void DeviceWorld::Impl::abort(const std::string& reason) {
  std::vector<std::shared_ptr<DeviceGroup>> live;
  {
    std::lock_guard lock(mutex);
    if (aborted.load()) return;  // the first reason is the cause; later ones are its echoes
    abort_reason = reason;
    aborted.store(true, std::memory_order_release);
    for (auto& weak : groups) {
      if (auto group = weak.lock()) live.push_back(std::move(group));
    }
  }
  for (auto& group : live) {
    group->phases.abort(reason);
    group->splits.abort(reason);
  }
  for (auto& box : mailboxes) {
    { std::lock_guard lock(box->mutex); }
    box->arrived.notify_all();
  }
}

std::shared_ptr<DeviceGroup> DeviceWorld::Impl::split_group(const DeviceGroup& parent, std::uint64_t sequence,
                                                            int colour, const std::vector<SplitSlot>& slots,
                                                            const std::string& name) {
  std::lock_guard lock(mutex);
  auto& slot = split_groups[{parent.id, sequence, colour}];
  if (!slot) {
    std::vector<std::pair<int, int>> members;  // (key, parent rank)
    for (std::size_t r = 0; r < slots.size(); ++r) {
      if (slots[r].colour == colour) members.emplace_back(slots[r].key, static_cast<int>(r));
    }
    std::sort(members.begin(), members.end());
    std::vector<int> ranks;
    for (const auto& [key, r] : members) ranks.push_back(parent.world_ranks[static_cast<std::size_t>(r)]);
    slot = std::make_shared<DeviceGroup>(next_group_id++, name, std::move(ranks));
    groups.push_back(slot);
  }
  return slot;
}

void DeviceWorld::Impl::post(int world_rank, const DeviceMessageKey& key, DeviceMessage message) {
  DeviceMailbox& box = *mailboxes[static_cast<std::size_t>(world_rank)];
  {
    std::lock_guard lock(box.mutex);
    box.queues[key].push_back(message);
  }
  box.arrived.notify_all();
}

Result<DeviceMessage> DeviceWorld::Impl::take(int world_rank, const DeviceMessageKey& key) {
  DeviceMailbox& box = *mailboxes[static_cast<std::size_t>(world_rank)];
  std::unique_lock lock(box.mutex);
  std::deque<DeviceMessage>* queue = nullptr;
  box.arrived.wait(lock, [&] {
    if (aborted.load(std::memory_order_acquire)) return true;
    auto it = box.queues.find(key);
    if (it == box.queues.end() || it->second.empty()) return false;
    queue = &it->second;
    return true;
  });
  if (queue == nullptr) {
    lock.unlock();
    return abort_status().errors();
  }
  DeviceMessage message = queue->front();
  queue->pop_front();
  return message;
}

DeviceWorld::DeviceWorld(int world_size, int device)
    : impl_(std::make_shared<Impl>(std::max(world_size, 1), device)) {}
DeviceWorld::~DeviceWorld() = default;
int DeviceWorld::size() const { return impl_->size; }
int DeviceWorld::device() const { return impl_->device; }
void DeviceWorld::abort(const std::string& reason) { impl_->abort(reason); }

Result<std::unique_ptr<Communicator>> DeviceWorld::world(int rank, cudaStream_t stream) {
  if (rank < 0 || rank >= impl_->size) {
    return make_error("communicator", "world rank " + std::to_string(rank) + "; valid: 0.." +
                                          std::to_string(impl_->size - 1));
  }
  if (impl_->size > kMaxGroupRanks) {
    return make_error("communicator", "a device world of " + std::to_string(impl_->size) + " ranks; valid: at most " +
                                          std::to_string(kMaxGroupRanks));
  }
  auto comm = DeviceCommunicator::create(impl_, impl_->world_group, rank, stream);
  if (!comm) return comm.errors();
  return std::unique_ptr<Communicator>(std::move(*comm));
}

Result<std::unique_ptr<Communicator>> split_device(Communicator& parent, int colour, int key, const std::string& name,
                                                   cudaStream_t stream) {
  auto* device = dynamic_cast<DeviceCommunicator*>(&parent);
  if (device == nullptr) {
    return make_error("communicator", "split_device() of \"" + parent.name() + "\": not a device communicator");
  }
  const std::uint64_t sequence = device->next_split_sequence();
  auto slots = device->group().splits.exchange(device->rank(), SplitSlot{colour, key});
  if (!slots) return slots.errors();
  if (colour < 0) return std::unique_ptr<Communicator>();
  auto group = device->world()->split_group(device->group(), sequence, colour, *slots, name);
  const auto& ranks = group->world_ranks;
  const int rank = static_cast<int>(std::find(ranks.begin(), ranks.end(), device->world_rank()) - ranks.begin());
  auto comm = DeviceCommunicator::create(device->world(), group, rank, stream != nullptr ? stream : device->stream());
  if (!comm) return comm.errors();
  return std::unique_ptr<Communicator>(std::move(*comm));
}

bool is_device_communicator(const Communicator& communicator) {
  return dynamic_cast<const DeviceCommunicator*>(&communicator) != nullptr;
}

cudaStream_t stream_of(const Communicator& communicator) {
  const auto* device = dynamic_cast<const DeviceCommunicator*>(&communicator);
  return device != nullptr ? device->stream() : nullptr;
}

}  // namespace plansight::runtime::cuda
