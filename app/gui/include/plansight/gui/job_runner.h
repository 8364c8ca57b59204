// JobRunner: the app's one way to work off the GUI thread. An owner (the plan document, a page,
// the run repository) keeps one; its jobs run on the runner's worker threads (one thread: in
// the order they were started), and what a job posts back runs on the owner's thread only while
// the job is still wanted. Jobs belong to lanes (an owner's independent streams of work: a
// refresh, a timeline load): beginning a new job of a lane makes the lane's earlier jobs stale,
// and cancel(lane) makes them all stale, so a stale job's results are dropped by its id instead
// of each owner counting generations by hand. A stale job's cancel flag is set, so estimator
// work it runs under a CancelScope stops early, and a queued stale job does not run at all;
// stop(lane) sets the flag alone, for a job whose cut-short result is still wanted.
// The destructor drops queued jobs, cancels running ones and waits for them: nothing is posted
// to an owner that is gone.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace plansight::gui {

class JobRunner : public QObject {
  Q_OBJECT

 public:
  using JobId = std::uint64_t;
  using Lane = int;

 private:
  struct State;  // lanes' latest ids and cancel flags, shared with running jobs

 public:
  // What a job's work sees: its id, whether it is still wanted, and the way back.
  class Job {
   public:
    JobId id() const { return id_; }
    // Still the latest job of its lane (a job of its own lane: not cancelled by cancelAll()).
    bool wanted() const;
    // Set once the job is stale or stopped; give it to estimator::CancelScope.
    const std::atomic<bool>* cancel_flag() const { return cancel_.get(); }
    // Runs `deliver` on the owner's thread if the job is still wanted when it gets there.
    void post(std::function<void()> deliver) const;

   private:
    friend class JobRunner;
    std::shared_ptr<State> state_;
    QObject* owner_ = nullptr;
    Lane lane_ = 0;
    JobId id_ = 0;
    bool own_ = false;  // startOwn(): nothing but cancelAll() makes it stale
    std::shared_ptr<std::atomic<bool>> cancel_;
  };
  using Work = std::function<void(const Job&)>;

  // `owner` receives what jobs post. Make the runner the owner's last member, so that it is
  // destroyed first and its jobs never see the owner's other members gone.
  explicit JobRunner(QObject* owner, int threads = 1);
  ~JobRunner() override;

  // A new job of `lane`: every earlier job of the lane becomes stale. Returns it, not yet run.
  Job begin(Lane lane = 0);
  // Runs `work` for `job` on a worker thread; skipped when the job is stale by the time its turn
  // comes. Several runs may share one job (the lines of one probe run, in order).
  void run(const Job& job, Work work);
  // begin() and run() in one.
  JobId start(Lane lane, Work work);
  JobId start(Work work) { return start(0, std::move(work)); }
  // A job in a lane of its own: no later job makes it stale, only cancelAll() and the
  // destructor (a save or an import, whose outcome is always reported).
  JobId startOwn(Work work);
  // Makes every job of `lane` stale: what they still post is dropped.
  void cancel(Lane lane = 0);
  // Makes every job of every lane stale.
  void cancelAll();
  // Asks the latest job of `lane` to stop early (its cancel flag) while what it posts is still
  // delivered: a user's Cancel of a slow estimate, which then says it was cancelled.
  void stop(Lane lane = 0);
  bool isLatest(Lane lane, JobId id) const;
  // True while a job is queued or running.
  bool isBusy() const { return pending_ > 0; }
  // Blocks until every queued and running job has ended (tests; the destructor).
  void waitForDone();

 signals:
  void idle();  // on the owner's thread: the last queued or running job ended

 private:
  std::shared_ptr<State> state_;
  QObject* owner_;
  int pending_ = 0;  // jobs queued or running; touched on the owner's thread only
  Lane next_own_lane_ = -1;  // startOwn()'s lanes count down, below every lane an owner names
  QThreadPool pool_;
};

}  // namespace plansight::gui
