// JobRunner (see job_runner.h).
#include "plansight/gui/job_runner.h"

#include <QMetaObject>
#include <QPointer>

namespace plansight::gui {

struct JobRunner::State {
  struct LaneState {
    JobId latest = 0;
    std::shared_ptr<std::atomic<bool>> cancel;  // the latest job's flag
  };
  mutable std::mutex mutex;
  JobId next_id = 0;
  std::map<Lane, LaneState> lanes;

  bool latest(Lane lane, JobId id) const {
    std::lock_guard lock(mutex);
    auto it = lanes.find(lane);
    return it != lanes.end() && it->second.latest == id;
  }
};

bool JobRunner::Job::wanted() const {
  if (!state_) return false;
  return own_ ? !cancel_->load() : state_->latest(lane_, id_);
}

void JobRunner::Job::post(std::function<void()> deliver) const {
  if (!wanted()) return;
  QPointer<QObject> owner(owner_);
  // Checked again on arrival: the job may have gone stale while the call was queued.
  QMetaObject::invokeMethod(
      owner_,
      [owner, job = *this, deliver = std::move(deliver)] {
        if (owner && job.wanted()) deliver();
      },
      Qt::QueuedConnection);
}

JobRunner::JobRunner(QObject* owner, int threads) : state_(std::make_shared<State>()), owner_(owner) {
  pool_.setMaxThreadCount(threads);
  // A lane's worker keeps its thread for the runner's lifetime, so a thread-bound resource (a
  // store connection opened by a job) stays on the thread that opened it.
  pool_.setExpiryTimeout(-1);
}

JobRunner::~JobRunner() {
  cancelAll();
  pool_.clear();
  pool_.waitForDone();
}

void JobRunner::cancelAll() {
  std::lock_guard lock(state_->mutex);
  for (auto& [lane, s] : state_->lanes) {
    s.latest = 0;
    if (s.cancel) s.cancel->store(true);
  }
}

JobRunner::Job JobRunner::begin(Lane lane) {
  Job job;
  job.state_ = state_;
  job.owner_ = owner_;
  job.lane_ = lane;
  job.cancel_ = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard lock(state_->mutex);
  job.id_ = ++state_->next_id;
  auto& s = state_->lanes[lane];
  if (s.cancel) s.cancel->store(true);  // the lane's earlier job is stale: stop it
  s.latest = job.id_;
  s.cancel = job.cancel_;
  return job;
}

void JobRunner::run(const Job& job, Work work) {
  ++pending_;
  QPointer<JobRunner> self(this);
  pool_.start([self, job, work = std::move(work)] {
    if (job.wanted()) work(job);
    if (job.own_) {  // an own lane ends with its job (its posts check the job's own flag)
      std::lock_guard lock(job.state_->mutex);
      job.state_->lanes.erase(job.lane_);
    }
    // The destructor waits for this lambda, so `self` is alive here; the queued call may arrive
    // after it is gone, which QPointer catches.
    QMetaObject::invokeMethod(
        self.data(),
        [self] {
          if (self && --self->pending_ == 0) emit self->idle();
        },
        Qt::QueuedConnection);
  });
}

JobRunner::JobId JobRunner::start(Lane lane, Work work) {
  Job job = begin(lane);
  run(job, std::move(work));
  return job.id();
}

JobRunner::JobId JobRunner::startOwn(Work work) {
  Job job = begin(next_own_lane_--);
  job.own_ = true;
  run(job, std::move(work));
  return job.id();
}

void JobRunner::cancel(Lane lane) {
  std::lock_guard lock(state_->mutex);
  auto it = state_->lanes.find(lane);
  if (it == state_->lanes.end()) return;
  it->second.latest = 0;
  if (it->second.cancel) it->second.cancel->store(true);
}

void JobRunner::stop(Lane lane) {
  std::lock_guard lock(state_->mutex);
  auto it = state_->lanes.find(lane);
  if (it != state_->lanes.end() && it->second.cancel) it->second.cancel->store(true);
}

bool JobRunner::isLatest(Lane lane, JobId id) const { return state_->latest(lane, id); }

void JobRunner::waitForDone() { pool_.waitForDone(); }

}  // namespace plansight::gui
