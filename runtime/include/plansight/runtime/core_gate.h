// CoreGate: lets at most `cores` threads of a probe run execute at once. Ranks are threads, and
// a run may have more ranks than the machine has cores (TP 2 x PP 4 x DP 2 is 16 threads). Left
// to the OS, surplus threads are time-sliced in slices of milliseconds, far longer than the
// kernels of a small model, so a tensor-parallel peer that lost its core keeps its partner
// waiting in an all-reduce for a whole slice, and the measured timeline is a mix of work and
// preemption no model can follow. Through the gate a thread holds a core while it runs and gives
// it back only when it blocks (waiting for a message, an idle gradient thread); waiting threads
// are served first come, first served. Kernels then run at the speed of one core, and what a rank
// waits for is either a peer or a core: a processor pool the estimator's simulator can model
// (SimulationInput::shared_cores).
//
// A thread binds to a gate with CoreHold; blocking waits go through wait_releasing_core(), which
// gives the core back for the wait and takes one again after it, never while holding the
// caller's mutex (a thread waiting for a core while holding a mailbox mutex would stop the core
// holders that need that mutex).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace plansight::runtime {

class CoreGate {
 public:
  explicit CoreGate(int cores);  // cores >= 1
  CoreGate(const CoreGate&) = delete;
  CoreGate& operator=(const CoreGate&) = delete;

  int cores() const { return cores_; }
  void acquire();  // blocks until a core is free; first come, first served
  void release();
  std::int64_t waits() const;  // acquisitions that had to wait (for tests and reports)

 private:
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int cores_;
  int free_;
  std::uint64_t next_ticket_ = 0;  // handed to the next thread that must wait
  std::uint64_t serving_ = 0;      // the waiting ticket allowed to take a freed core
  std::int64_t waits_ = 0;
};

// Binds the calling thread to `gate` (null: no gate, nothing happens) and takes a core for the
// thread's lifetime; the destructor gives it back.
class CoreHold {
 public:
  explicit CoreHold(CoreGate* gate);
  ~CoreHold();
  CoreHold(const CoreHold&) = delete;
  CoreHold& operator=(const CoreHold&) = delete;

 private:
  CoreGate* previous_;
  bool previous_held_;
};

// Gives the calling thread's core back for the scope of a blocking call that does not go
// through wait_releasing_core (none held: nothing happens). Must not be created while holding a
// lock that core holders need.
class CoreReleased {
 public:
  CoreReleased();
  ~CoreReleased();
  CoreReleased(const CoreReleased&) = delete;
  CoreReleased& operator=(const CoreReleased&) = delete;

 private:
  bool released_;
};

// cv.wait(lock, ready), but a thread holding a core gives it back while it sleeps. `lock` is
// held on entry and on return, with ready() true; ready() is always evaluated under the lock.
template <class Ready>
void wait_releasing_core(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Ready ready) {
  while (!ready()) {
    lock.unlock();
    {
      CoreReleased released;
      lock.lock();
      cv.wait(lock, ready);
      lock.unlock();
    }  // the core is taken again here, with the lock released
    lock.lock();
  }
}

// The cores this process may run on (its CPU affinity mask; at least 1).
int available_cores();

}  // namespace plansight::runtime
