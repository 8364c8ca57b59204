// A reusable meeting point for the n threads of a group: in each round every member deposits one
// value with exchange(rank, value) and gets all n values back in rank order once the last member
// has arrived. The device communicator uses it to swap buffer pointers and events between its
// virtual ranks before every collective phase. Rounds alternate between two slot arrays: a member
// can be at most one round ahead of the slowest (the next round cannot complete without it), so
// the slowest still reads its round's values when the fastest has started the next. abort() fails
// every pending and later call, so a failed rank never leaves the others waiting forever.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

template <class T>
class Rendezvous {
 public:
  explicit Rendezvous(int size) : size_(size) {
    for (auto& slots : slots_) slots.resize(static_cast<std::size_t>(size));
  }

  int size() const { return size_; }

  Result<std::vector<T>> exchange(int rank, T value) {
    if (rank < 0 || rank >= size_) {
      return make_error("rendezvous", "rank " + std::to_string(rank) + " of a group of " + std::to_string(size_) +
                                          "; valid: 0.." + std::to_string(size_ - 1));
    }
    std::unique_lock lock(mutex_);
    if (aborted_) return aborted_error();
    const std::uint64_t round = round_;
    std::vector<T>& slots = slots_[round % 2];
    slots[static_cast<std::size_t>(rank)] = std::move(value);
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++round_;
      changed_.notify_all();
      return slots;
    }
    changed_.wait(lock, [&] { return round_ != round || aborted_; });
    if (round_ == round) return aborted_error();
    return slots;
  }

  // Fails every pending and later exchange with `reason` (the first reason is kept).
  void abort(const std::string& reason) {
    {
      std::lock_guard lock(mutex_);
      if (aborted_) return;
      aborted_ = true;
      reason_ = reason;
    }
    changed_.notify_all();
  }

 private:
  Diagnostic aborted_error() const { return make_error("communicator", "aborted: " + reason_); }

  const int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t round_ = 0;
  int arrived_ = 0;
  std::array<std::vector<T>, 2> slots_;
  bool aborted_ = false;
  std::string reason_;
};

}  // namespace plansight::runtime::cuda
