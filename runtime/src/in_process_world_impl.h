// Private state of an InProcessWorld: one mailbox per world rank, the registry of groups made
// by split(), and the abort flag that every blocking wait checks. Messages are copied into the
// receiver's mailbox at send time (an eager protocol), so a send never waits for its receiver;
// a receive waits on its own mailbox's condition variable until a match arrives or the world aborts.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "plansight/runtime/communicator.h"

namespace plansight::runtime {

// A group of world ranks (the world itself, or one colour of a split).
struct GroupInfo {
  std::uint64_t id = 0;
  std::string name;
  std::vector<int> world_ranks;  // index: rank within the group
};

// Which queue a message waits in at its receiver: group, sender's rank in the group, tag.
// Collectives use negative tags, so they never match user point-to-point messages.
using MessageKey = std::tuple<std::uint64_t, int, int>;

struct Mailbox {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<MessageKey, std::deque<std::vector<float>>> queues;
  std::vector<std::vector<float>> spare;  // received buffers kept for reuse by later sends
};

// Ranks of a parent group meeting in split(): each deposits (colour, key), all wait for all.
struct SplitRendezvous {
  std::vector<std::pair<int, int>> colour_key;
  int arrived = 0;
  int left = 0;
};

struct InProcessWorld::Impl {
  explicit Impl(int world_size);

  int size = 0;
  std::vector<std::unique_ptr<Mailbox>> mailboxes;  // by world rank

  std::atomic<bool> aborted{false};
  std::mutex abort_mutex;
  std::string abort_reason;

  std::mutex registry_mutex;
  std::condition_variable registry_changed;
  std::uint64_t next_group_id = 1;  // 0 is the world
  std::map<std::tuple<std::uint64_t, std::uint64_t, int>, std::shared_ptr<GroupInfo>> split_groups;
  std::map<std::pair<std::uint64_t, std::uint64_t>, SplitRendezvous> rendezvous;
  std::shared_ptr<GroupInfo> world_group;

  // Copies `count` floats into world rank `dst`'s mailbox under `key`.
  Status post(int dst, const MessageKey& key, const float* data, std::size_t count);
  // Waits for the oldest message under `key` in world rank `self`'s mailbox and copies it out.
  Status take(int self, const MessageKey& key, float* data, std::size_t count);
  void abort(const std::string& reason);
  Status abort_status();

  // split(): the group of `parent_rank` after every member of `parent` called with its colour.
  Result<std::shared_ptr<GroupInfo>> split(const GroupInfo& parent, std::uint64_t sequence, int parent_rank,
                                           int colour, int key, const std::string& name);
};

}  // namespace plansight::runtime
