// GradSync: one worker thread per rank with a FIFO of reduction tasks. Every DP peer submits
// the same units in the same order (they run the same schedule), so the collectives match.
#include "grad_sync.h"

namespace plansight::probe {

GradSync::GradSync(RankContext& ctx, runtime::Communicator& comm, bool overlap, std::function<runtime::Status()> started)
    : ctx_(ctx), comm_(comm), overlap_(overlap) {
  if (overlap_) {
    thread_ = std::thread([this, started = std::move(started)] {
      // A thread that could not be set up (its GPU not made current) runs no task: each would
      // launch against another device. The failure is the rank's at its next drain.
      const runtime::Status ready = started ? started() : runtime::ok_status();
      if (!ready) {
        std::lock_guard lock(mutex_);
        not_ready_ = true;
        error_ = "gradient thread: " + ready.error_text();
      }
      changed_.notify_all();
      loop();
    });
  }
}

GradSync::~GradSync() {
  if (!overlap_) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void GradSync::run(Item& item) {
  runtime::SpanInfo info;
  info.lane = estimator::Lane::communication;
  info.kind = estimator::SpanKind::collective;
  info.phase = estimator::Phase::communication;
  info.stage = item.stage;
  info.bytes = item.bytes;
  info.stream = 1;  // the gradient thread: its own communication track, overlapping the backward
  runtime::Status status = runtime::ok_status();
  {
    runtime::ScopedSpan span(ctx_.tracer, ctx_.rank, item.name, info);
    try {
      status = item.task(comm_);
    } catch (const std::exception& e) {
      status = make_error("grad_sync", e.what());
    }
  }
  if (!status) {
    std::lock_guard lock(mutex_);
    if (error_.empty()) error_ = status.error_text();
  }
}

void GradSync::submit(const char* name, int stage, double bytes, Task task) {
  Item item{name, stage, bytes, std::move(task)};
  if (!overlap_) {
    run(item);
    std::lock_guard lock(mutex_);
    if (!error_.empty()) throw RankFailure(error_);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(item));
  }
  changed_.notify_all();
}

void GradSync::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and nothing left
    Item item = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    const bool skip = not_ready_;
    lock.unlock();
    if (!skip) run(item);
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

void GradSync::wait_until_pending_at_most(std::size_t pending) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() + (busy_ ? 1 : 0) <= pending || !error_.empty(); });
  if (!error_.empty()) throw RankFailure(error_);
}

void GradSync::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || !error_.empty(); });
  if (!error_.empty()) throw RankFailure(error_);
}

}  // namespace plansight::probe
