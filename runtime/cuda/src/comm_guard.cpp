// CommGuard (comm_guard.h). Why abort() may leave the handle to a busy user: abort() stores the
// request before it tries the lock, and a user clears `busy_` and lets go of the lock before it
// reads the request again, so (all atomics sequentially consistent) a user that abort() saw busy
// reads the request after it leaves and frees the handle itself. A failed try_lock with nobody
// busy (a user between taking the lock and saying so, or a spurious failure) is retried.
#include "plansight/runtime/cuda/comm_guard.h"

#include <thread>

namespace plansight::runtime::cuda {

CommGuard::CommGuard(std::function<void()> abort_handle, std::function<void()> destroy_handle)
    : abort_handle_(std::move(abort_handle)), destroy_handle_(std::move(destroy_handle)) {}

CommGuard::~CommGuard() { close(); }

void CommGuard::free_locked(bool abort) {
  if (freed_) return;
  freed_ = true;
  if (abort) {
    if (abort_handle_) abort_handle_();
  } else if (destroy_handle_) {
    destroy_handle_();
  }
}

void CommGuard::finish_requested_abort() {
  if (!abort_requested_.load()) return;
  std::lock_guard lock(mutex_);
  busy_.store(true);  // an abort() meanwhile leaves it to this thread instead of spinning
  free_locked(true);
  busy_.store(false);
}

std::optional<Status> CommGuard::use(const std::function<Status()>& operation) {
  std::optional<Status> result;
  {
    std::lock_guard lock(mutex_);
    if (!freed_ && !abort_requested_.load()) {
      busy_.store(true);
      result = operation();
      busy_.store(false);
    }
  }
  finish_requested_abort();
  return result;
}

void CommGuard::abort() {
  abort_requested_.store(true);
  for (;;) {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      free_locked(true);
      return;
    }
    if (busy_.load()) return;  // the holder frees it as it leaves
    std::this_thread::yield();
  }
}

void CommGuard::close() {
  std::lock_guard lock(mutex_);
  busy_.store(true);
  free_locked(abort_requested_.load());
  busy_.store(false);
}

}  // namespace plansight::runtime::cuda
