// Ring collectives over the in-process mailboxes (Patarasuk & Yuan 2009, "Bandwidth optimal
// all-reduce algorithms for clusters of workstations"; the algorithm NCCL uses for rings):
// all-reduce = reduce-scatter then all-gather, each p - 1 steps in which every rank hands one
// chunk to its right-hand neighbour and takes one from its left. Counts that the group size does
// not divide are cut into chunks whose sizes differ by at most one element.
#include "in_process_communicator.h"

#include <algorithm>
#include <cstring>

namespace plansight::runtime {
namespace {

// Start of chunk i of n elements cut into p chunks: n*i/p, so sizes differ by at most one.
std::size_t chunk_begin(std::size_t n, int i, int p) { return n * static_cast<std::size_t>(i) / static_cast<std::size_t>(p); }
int mod(int a, int p) { return ((a % p) + p) % p; }

}  // namespace

InProcessCommunicator::InProcessCommunicator(std::shared_ptr<InProcessWorld::Impl> world,
                                             std::shared_ptr<const GroupInfo> group, int rank)
    : world_(std::move(world)), group_(std::move(group)), rank_(rank) {}

Status InProcessCommunicator::post(int peer, int tag, const float* data, std::size_t count) {
  const int dst = group_->world_ranks[static_cast<std::size_t>(peer)];
  return world_->post(dst, MessageKey{group_->id, rank_, tag}, data, count);
}

Status InProcessCommunicator::take(int peer, int tag, float* data, std::size_t count) {
  const int self = group_->world_ranks[static_cast<std::size_t>(rank_)];
  return world_->take(self, MessageKey{group_->id, peer, tag}, data, count);
}

Status InProcessCommunicator::check_peer(int peer, const char* what) const {
  if (peer >= 0 && peer < size() && peer != rank_) return ok_status();
  return make_error("communicator", std::string(what) + " peer " + std::to_string(peer) + " in group \"" + name() +
                                        "\" of " + std::to_string(size()) + " ranks; valid: 0.." +
                                        std::to_string(size() - 1) + " other than " + std::to_string(rank_));
}

Status InProcessCommunicator::all_reduce(float* data, std::size_t count) {
  const int p = size();
  if (p == 1) return world_->aborted.load() ? world_->abort_status() : ok_status();
  const int right = mod(rank_ + 1, p), left = mod(rank_ - 1, p);
  scratch_.resize(count / static_cast<std::size_t>(p) + 1);
  auto length = [&](int c) { return chunk_begin(count, c + 1, p) - chunk_begin(count, c, p); };
  // Reduce-scatter: after step s, the chunk received holds the sum of s + 2 ranks' values.
  for (int s = 0; s < p - 1; ++s) {
    const int send_chunk = mod(rank_ - s, p), recv_chunk = mod(rank_ - s - 1, p);
    if (auto st = post(right, kCollectiveTag, data + chunk_begin(count, send_chunk, p), length(send_chunk)); !st) return st;
    const std::size_t n = length(recv_chunk);
    if (auto st = take(left, kCollectiveTag, scratch_.data(), n); !st) return st;
    float* dst = data + chunk_begin(count, recv_chunk, p);
    for (std::size_t i = 0; i < n; ++i) dst[i] += scratch_[i];
  }
  // Rank r now holds the full sum of chunk r + 1; the all-gather passes the sums around.
  for (int s = 0; s < p - 1; ++s) {
    const int send_chunk = mod(rank_ + 1 - s, p), recv_chunk = mod(rank_ - s, p);
    if (auto st = post(right, kCollectiveTag, data + chunk_begin(count, send_chunk, p), length(send_chunk)); !st) return st;
    if (auto st = take(left, kCollectiveTag, data + chunk_begin(count, recv_chunk, p), length(recv_chunk)); !st) return st;
  }
  return ok_status();
}

Status InProcessCommunicator::reduce_scatter(const float* in, float* out, std::size_t count) {
  const int p = size();
  if (p == 1) {
    if (out != in && count > 0) std::memmove(out, in, count * sizeof(float));
    return world_->aborted.load() ? world_->abort_status() : ok_status();
  }
  const int right = mod(rank_ + 1, p), left = mod(rank_ - 1, p);
  scratch_.resize(count);
  // Step s sends the partial sum of block r - s - 1 (at s = 0 the rank's own values) and
  // receives block r - s - 2, adding its own contribution; the last block received is r's own.
  const float* send_block = in + static_cast<std::size_t>(mod(rank_ - 1, p)) * count;
  for (int s = 0; s < p - 1; ++s) {
    if (auto st = post(right, kCollectiveTag, send_block, count); !st) return st;
    if (auto st = take(left, kCollectiveTag, scratch_.data(), count); !st) return st;
    const float* own = in + static_cast<std::size_t>(mod(rank_ - s - 2, p)) * count;
    for (std::size_t i = 0; i < count; ++i) scratch_[i] += own[i];
    send_block = scratch_.data();  // post() copied the previous block, so the buffer is free
  }
  if (count > 0) std::memcpy(out, scratch_.data(), count * sizeof(float));
  return ok_status();
}

Status InProcessCommunicator::all_gather(const float* in, float* out, std::size_t count) {
  const int p = size();
  float* own = out + static_cast<std::size_t>(rank_) * count;
  if (own != in && count > 0) std::memmove(own, in, count * sizeof(float));
  if (p == 1) return world_->aborted.load() ? world_->abort_status() : ok_status();
  const int right = mod(rank_ + 1, p), left = mod(rank_ - 1, p);
  for (int s = 0; s < p - 1; ++s) {
    const float* send_block = out + static_cast<std::size_t>(mod(rank_ - s, p)) * count;
    if (auto st = post(right, kCollectiveTag, send_block, count); !st) return st;
    float* recv_block = out + static_cast<std::size_t>(mod(rank_ - s - 1, p)) * count;
    if (auto st = take(left, kCollectiveTag, recv_block, count); !st) return st;
  }
  return ok_status();
}

Status InProcessCommunicator::broadcast(float* data, std::size_t count, int root) {
  const int p = size();
  if (root < 0 || root >= p) {
    return make_error("communicator", "broadcast root " + std::to_string(root) + " in group \"" + name() + "\"; valid: 0.." + std::to_string(p - 1));
  }
  if (p == 1) return world_->aborted.load() ? world_->abort_status() : ok_status();
  // A chain along the ring from the root: the rank at distance d receives, then forwards.
  const int distance = mod(rank_ - root, p);
  if (distance > 0) {
    if (auto st = take(mod(rank_ - 1, p), kCollectiveTag, data, count); !st) return st;
  }
  if (distance < p - 1) return post(mod(rank_ + 1, p), kCollectiveTag, data, count);
  return ok_status();
}

Status InProcessCommunicator::send(const float* data, std::size_t count, int peer, int tag) {
  if (auto st = check_peer(peer, "send to"); !st) return st;
  if (tag < 0) return make_error("communicator", "send tag " + std::to_string(tag) + "; valid: >= 0");
  return post(peer, tag, data, count);
}

Status InProcessCommunicator::recv(float* data, std::size_t count, int peer, int tag) {
  if (auto st = check_peer(peer, "recv from"); !st) return st;
  if (tag < 0) return make_error("communicator", "recv tag " + std::to_string(tag) + "; valid: >= 0");
  return take(peer, tag, data, count);
}

}  // namespace plansight::runtime
