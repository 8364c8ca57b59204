// The Communicator of ranks that are threads of one process: collectives as rings over the
// world's mailboxes (each step hands one chunk to the right-hand neighbour), point to point as
// tagged messages. One instance belongs to one thread; several instances of the same world rank
// (e.g. a compute thread's "dp" and a communication thread's "dp-grad") never share messages.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "in_process_world_impl.h"

namespace plansight::runtime {

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<InProcessWorld::Impl> world, std::shared_ptr<const GroupInfo> group, int rank);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(group_->world_ranks.size()); }
  const std::string& name() const override { return group_->name; }

  Status all_reduce(float* data, std::size_t count) override;
  Status reduce_scatter(const float* in, float* out, std::size_t count) override;
  Status all_gather(const float* in, float* out, std::size_t count) override;
  Status broadcast(float* data, std::size_t count, int root) override;
  Status send(const float* data, std::size_t count, int peer, int tag = 0) override;
  Status recv(float* data, std::size_t count, int peer, int tag = 0) override;

  InProcessWorld::Impl& world() { return *world_; }
  const std::shared_ptr<InProcessWorld::Impl>& world_ptr() const { return world_; }
  const GroupInfo& group() const { return *group_; }
  std::uint64_t next_split_sequence() { return split_sequence_++; }

 private:
  static constexpr int kCollectiveTag = -1;
  Status post(int peer, int tag, const float* data, std::size_t count);
  Status take(int peer, int tag, float* data, std::size_t count);
  Status check_peer(int peer, const char* what) const;

  std::shared_ptr<InProcessWorld::Impl> world_;
  std::shared_ptr<const GroupInfo> group_;
  int rank_ = 0;
  std::uint64_t split_sequence_ = 0;
  std::vector<float> scratch_;
};

}  // namespace plansight::runtime
