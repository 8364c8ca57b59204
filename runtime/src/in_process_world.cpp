// InProcessWorld: mailboxes, abort and the split() rendezvous (see in_process_world_impl.h).
// split() follows MPI_Comm_split: members of the parent meet, each with (colour, key); a
// colour's members form a group ordered by (key, parent rank); group ids are handed out once
// per (parent, split call, colour), so every member agrees on them without a message.
#include <algorithm>
#include <cstring>

#include "in_process_communicator.h"

namespace plansight::runtime {

InProcessWorld::Impl::Impl(int world_size) : size(world_size) {
  for (int r = 0; r < size; ++r) mailboxes.push_back(std::make_unique<Mailbox>());
  world_group = std::make_shared<GroupInfo>();
  world_group->id = 0;
  world_group->name = "world";
  for (int r = 0; r < size; ++r) world_group->world_ranks.push_back(r);
}

Status InProcessWorld::Impl::abort_status() {
  std::lock_guard lock(abort_mutex);
  return make_error("communicator", "aborted: " + abort_reason);
}

Status InProcessWorld::Impl::post(int dst, const MessageKey& key, const float* data, std::size_t count) {
  if (aborted.load(std::memory_order_acquire)) return abort_status();
  Mailbox& box = *mailboxes[static_cast<std::size_t>(dst)];
  std::vector<float> message;
  {
    std::lock_guard lock(box.mutex);
    if (!box.spare.empty()) {
      message = std::move(box.spare.back());
      box.spare.pop_back();
    }
  }
  message.resize(count);  // the copy happens outside the lock, so the receiver is never held up
  if (count > 0) std::memcpy(message.data(), data, count * sizeof(float));
  {
    std::lock_guard lock(box.mutex);
    box.queues[key].push_back(std::move(message));
  }
  box.arrived.notify_all();  // a rank's compute and communication threads share its mailbox
  return ok_status();
}

Status InProcessWorld::Impl::take(int self, const MessageKey& key, float* data, std::size_t count) {
  Mailbox& box = *mailboxes[static_cast<std::size_t>(self)];
  std::vector<float> message;
  {
    std::unique_lock lock(box.mutex);
    std::deque<std::vector<float>>* queue = nullptr;
    box.arrived.wait(lock, [&] {
      if (aborted.load(std::memory_order_acquire)) return true;
      auto it = box.queues.find(key);
      if (it == box.queues.end() || it->second.empty()) return false;
      queue = &it->second;
      return true;
    });
    if (!queue) return abort_status();
    message = std::move(queue->front());
    queue->pop_front();
  }
  if (message.size() != count) {
    return make_error("communicator", "receive of " + std::to_string(count) + " floats matched a send of " +
                                          std::to_string(message.size()) + " (group " + std::to_string(std::get<0>(key)) +
                                          ", from rank " + std::to_string(std::get<1>(key)) + ", tag " +
                                          std::to_string(std::get<2>(key)) + ")");
  }
  if (count > 0) std::memcpy(data, message.data(), count * sizeof(float));
  std::lock_guard lock(box.mutex);
  if (box.spare.size() < 8) box.spare.push_back(std::move(message));
  return ok_status();
}

void InProcessWorld::Impl::abort(const std::string& reason) {
  {
    std::lock_guard lock(abort_mutex);
    if (aborted.load()) return;  // the first reason is the cause; later ones are its echoes
    abort_reason = reason;
    aborted.store(true, std::memory_order_release);
  }
  // Taking each mutex before notifying closes the window between a waiter's predicate check
  // and its sleep, so no waiter misses the wake-up.
  for (auto& box : mailboxes) {
    { std::lock_guard lock(box->mutex); }
    box->arrived.notify_all();
  }
  { std::lock_guard lock(registry_mutex); }
  registry_changed.notify_all();
}

Result<std::shared_ptr<GroupInfo>> InProcessWorld::Impl::split(const GroupInfo& parent, std::uint64_t sequence,
                                                               int parent_rank, int colour, int key,
                                                               const std::string& name) {
  const int n = static_cast<int>(parent.world_ranks.size());
  const auto meeting = std::make_pair(parent.id, sequence);
  std::unique_lock lock(registry_mutex);
  SplitRendezvous& rv = rendezvous[meeting];
  if (rv.colour_key.empty()) rv.colour_key.assign(static_cast<std::size_t>(n), {-1, 0});
  rv.colour_key[static_cast<std::size_t>(parent_rank)] = {colour, key};
  ++rv.arrived;
  registry_changed.notify_all();
  registry_changed.wait(lock, [&] { return rv.arrived == n || aborted.load(); });
  if (rv.arrived != n) return abort_status().errors();

  std::shared_ptr<GroupInfo> group;
  if (colour >= 0) {
    auto& slot = split_groups[{parent.id, sequence, colour}];
    if (!slot) {
      std::vector<std::pair<int, int>> members;  // (key, parent rank)
      for (int r = 0; r < n; ++r) {
        if (rv.colour_key[static_cast<std::size_t>(r)].first == colour) members.emplace_back(rv.colour_key[static_cast<std::size_t>(r)].second, r);
      }
      std::sort(members.begin(), members.end());
      slot = std::make_shared<GroupInfo>();
      slot->id = next_group_id++;
      slot->name = name;
      for (const auto& [k, r] : members) slot->world_ranks.push_back(parent.world_ranks[static_cast<std::size_t>(r)]);
    }
    group = slot;
  }
  if (++rv.left == n) rendezvous.erase(meeting);  // the last one out cleans up
  return group;
}

InProcessWorld::InProcessWorld(int world_size) : impl_(std::make_shared<Impl>(std::max(world_size, 1))) {}
InProcessWorld::~InProcessWorld() = default;
int InProcessWorld::size() const { return impl_->size; }

std::unique_ptr<Communicator> InProcessWorld::world(int rank) {
  return std::make_unique<InProcessCommunicator>(impl_, impl_->world_group, rank);
}

void InProcessWorld::abort(const std::string& reason) { impl_->abort(reason); }

Result<std::unique_ptr<Communicator>> split(Communicator& parent, int colour, int key, const std::string& name) {
  auto* in_process = dynamic_cast<InProcessCommunicator*>(&parent);
  if (!in_process) return make_error("communicator", "split() of \"" + parent.name() + "\": not an in-process communicator");
  const std::uint64_t sequence = in_process->next_split_sequence();
  auto group = in_process->world().split(in_process->group(), sequence, in_process->rank(), colour, key, name);
  if (!group) return group.errors();
  if (!*group) return std::unique_ptr<Communicator>();
  const auto& ranks = (*group)->world_ranks;
  const int world_rank = in_process->group().world_ranks[static_cast<std::size_t>(in_process->rank())];
  const int rank = static_cast<int>(std::find(ranks.begin(), ranks.end(), world_rank) - ranks.begin());
  return std::unique_ptr<Communicator>(std::make_unique<InProcessCommunicator>(in_process->world_ptr(), *group, rank));
}

}  // namespace plansight::runtime
