// Private to the estimator: one long-lived thread beside the caller's, for work that can run at
// the same time as the caller's own: a long schedule table is made there half by half
// (generators::make_ranks, pipeline_schedule.cpp). The thread lives as long as the process, so
// that what it keeps per thread is reused from run to run as the caller's is; a fresh thread per
// run would allocate and fault it in every time.
#pragma once

#include <exception>
#include <functional>

namespace plansight::estimator {

// A job handed to the side thread when it is idle, or run by the caller in wait() when another
// caller's job holds it (then nothing runs in parallel, and nothing waits for that other job).
// The job runs under the caller's CancelScope flag (cancellation.h), so a cancelled estimate
// stops both of its simulations. wait() (or the destructor) returns once the job has run;
// wait() rethrows what the job threw.
class SideJob {
 public:
  explicit SideJob(std::function<void()> job);
  ~SideJob();
  SideJob(const SideJob&) = delete;
  SideJob& operator=(const SideJob&) = delete;

  void wait();
  // Whether the job went to the side thread (false: it runs in wait()).
  bool on_side_thread() const { return on_side_; }

 private:
  std::function<void()> job_;
  bool on_side_ = false, waited_ = false;
};

// Whether this machine has a core for the side thread (more than one hardware thread).
bool side_thread_useful();

}  // namespace plansight::estimator
