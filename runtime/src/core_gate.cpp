// CoreGate: a counting semaphore with tickets, so that threads waiting for a core get one in
// the order they asked (std::counting_semaphore makes no ordering promise, and an unfair gate
// would let a thread that releases and re-acquires in a loop starve its peers).
#include "plansight/runtime/core_gate.h"

#include <algorithm>
#include <thread>

#include <sched.h>

namespace plansight::runtime {
namespace {

thread_local CoreGate* t_gate = nullptr;  // the gate of the calling thread
thread_local bool t_held = false;         // whether the calling thread holds one of its cores

}  // namespace

CoreGate::CoreGate(int cores) : cores_(std::max(cores, 1)), free_(std::max(cores, 1)) {}

void CoreGate::acquire() {
  std::unique_lock lock(mutex_);
  if (free_ > 0 && serving_ == next_ticket_) {  // a free core and nobody queued before us
    --free_;
    return;
  }
  ++waits_;
  const std::uint64_t ticket = next_ticket_++;
  freed_.wait(lock, [&] { return free_ > 0 && serving_ == ticket; });
  --free_;
  ++serving_;
  lock.unlock();
  freed_.notify_all();  // the next ticket may find a core free too
}

void CoreGate::release() {
  {
    std::lock_guard lock(mutex_);
    ++free_;
  }
  freed_.notify_all();
}

std::int64_t CoreGate::waits() const {
  std::lock_guard lock(mutex_);
  return waits_;
}

CoreHold::CoreHold(CoreGate* gate) : previous_(t_gate), previous_held_(t_held) {
  t_gate = gate;
  t_held = false;
  if (gate) {
    gate->acquire();
    t_held = true;
  }
}

CoreHold::~CoreHold() {
  if (t_gate && t_held) t_gate->release();
  t_gate = previous_;
  t_held = previous_held_;
}

CoreReleased::CoreReleased() : released_(t_gate && t_held) {
  if (released_) {
    t_gate->release();
    t_held = false;
  }
}

CoreReleased::~CoreReleased() {
  if (released_) {
    t_gate->acquire();
    t_held = true;
  }
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(CPU_COUNT(&set), 1);
  return static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u));
}

}  // namespace plansight::runtime
