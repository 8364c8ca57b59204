// The side thread of SideJob (side_thread.h).
#include "side_thread.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "plansight/estimator/cancellation.h"

namespace plansight::estimator {
namespace {

// One slot: a job is taken only while the slot is free, and the slot stays taken until its
// owner has collected the job's end (SideJob::wait), so one owner at a time.
class SideThread {
 public:
  static SideThread& instance() {
    static SideThread side;
    return side;
  }

  bool try_start(std::function<void()>* job, const std::atomic<bool>* cancel) {
    std::lock_guard lock(mu_);
    if (taken_ || stopping_) return false;
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    taken_ = true;
    done_ = false;
    error_ = nullptr;
    job_ = job;
    cancel_ = cancel;
    ready_.notify_one();
    return true;
  }

  // Blocks until the started job ran; frees the slot; rethrows the job's exception.
  void collect() {
    std::exception_ptr error;
    {
      std::unique_lock lock(mu_);
      finished_.wait(lock, [this] { return done_; });
      taken_ = false;
      error = error_;
    }
    if (error) std::rethrow_exception(error);
  }

  ~SideThread() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      ready_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || job_ != nullptr; });
      if (job_ == nullptr) return;  // stopping, nothing left to run
      std::function<void()>* job = job_;
      const std::atomic<bool>* cancel = cancel_;
      job_ = nullptr;
      lock.unlock();
      std::exception_ptr error;
      try {
        const CancelScope scope(cancel);
        (*job)();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      error_ = error;
      done_ = true;
      finished_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_, finished_;
  std::thread thread_;
  std::function<void()>* job_ = nullptr;
  const std::atomic<bool>* cancel_ = nullptr;
  std::exception_ptr error_;
  bool taken_ = false, done_ = false, stopping_ = false;
};

}  // namespace

SideJob::SideJob(std::function<void()> job) : job_(std::move(job)) {
  on_side_ = side_thread_useful() && SideThread::instance().try_start(&job_, current_cancel_flag());
}

SideJob::~SideJob() {
  if (waited_) return;
  try {
    wait();
  } catch (...) {
    // The caller did not wait; what the job threw has nowhere to go.
  }
}

void SideJob::wait() {
  if (waited_) return;
  waited_ = true;
  if (on_side_) {
    SideThread::instance().collect();
  } else {
    job_();
  }
}

bool side_thread_useful() {
  static const bool useful = std::thread::hardware_concurrency() > 1;
  return useful;
}

}  // namespace plansight::estimator
