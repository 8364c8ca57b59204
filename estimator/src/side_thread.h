// Private to the estimator: one long-lived thread beside the caller's, for work that can run at
// the same time as the caller's own. predict_time() runs its second simulation of a large
// schedule there (the same table with free pipeline transfers, for the bubble's split), so that
// an estimate waits for one simulation, not two. The thread lives as long as the process, so that
// its per-thread simulator arrays (iteration_engine.cpp) are reused from run to run as the
// caller's are; a fresh thread per run would allocate and fault them in every time.
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
