// Cooperative cancellation of a long estimate (a 1000-stage pipeline of 1000 micro-batches
// simulates 2 million operations for seconds): the thread that estimates installs a flag with a
// CancelScope, and the schedule simulators poll cancel_requested() every few thousand operations,
// stopping with an error on the field "estimate". Thread-local, so that no signature between the
// caller and the simulators changes and concurrent estimates (search workers) stay independent.
#pragma once

#include <atomic>

namespace plansight::estimator {

class CancelScope {
 public:
  // `flag` outlives the scope; null installs nothing. Scopes nest: the innermost flag is polled.
  explicit CancelScope(const std::atomic<bool>* flag);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

// True when this thread's innermost CancelScope's flag is set.
bool cancel_requested();

// This thread's innermost CancelScope's flag (null: none), for work it hands to another thread.
const std::atomic<bool>* current_cancel_flag();

// The message of the error a cancelled estimate returns (field "estimate").
inline constexpr const char* kCancelledMessage = "cancelled before it finished";

}  // namespace plansight::estimator
