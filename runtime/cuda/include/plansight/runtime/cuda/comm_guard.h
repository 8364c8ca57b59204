// CommGuard: the lock of one communication-library handle (an ncclComm_t). NCCL lets one thread
// at a time operate a communicator (NCCL User Guide, "Thread Safety"), yet a failure elsewhere
// must abort it from another thread (the MPI progress thread's failure hook) while a rank thread
// may be inside a call on it. So every use holds the lock, and abort() never frees the handle
// under a user and never waits for one: it frees the handle at once when nobody uses it, and
// otherwise leaves the abort to the user, who performs it as it leaves use(). Plain C++ (the
// free functions are given), so the protocol is tested without a GPU.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>

#include "plansight/runtime/communicator.h"

namespace plansight::runtime::cuda {

class CommGuard {
 public:
  // `abort_handle` frees the handle and stops its pending work (ncclCommAbort); `destroy_handle`
  // frees it after its work (ncclCommDestroy). Each runs at most once, and only one of them.
  CommGuard(std::function<void()> abort_handle, std::function<void()> destroy_handle);
  ~CommGuard();  // close()
  CommGuard(const CommGuard&) = delete;
  CommGuard& operator=(const CommGuard&) = delete;

  // Runs `operation` holding the lock and returns its status; nullopt, without running it, once
  // an abort was requested (the handle is then aborted here if nobody has yet).
  std::optional<Status> use(const std::function<Status()>& operation);
  // Requests the abort from any thread: done now when no thread is inside use(), else by that
  // thread as it leaves use(). Returns without waiting for a use to finish.
  void abort();
  bool abort_requested() const { return abort_requested_.load(); }
  // Frees the handle (abort_handle when an abort was requested, destroy_handle otherwise) unless
  // it was freed; waits for a use in progress. Later use() calls return nullopt.
  void close();

 private:
  void free_locked(bool abort);  // holds mutex_
  void finish_requested_abort();

  std::function<void()> abort_handle_, destroy_handle_;
  std::mutex mutex_;
  bool freed_ = false;                      // under mutex_
  std::atomic<bool> abort_requested_{false};
  // Set while a holder of mutex_ will honour a requested abort before it lets go of the handle
  // (a use, or close()): abort() may then leave the handle to it.
  std::atomic<bool> busy_{false};
};

}  // namespace plansight::runtime::cuda
