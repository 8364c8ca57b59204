// JobRunner: the newest job of a lane is the only one whose results arrive; a stale job's
// cancel flag is set and a queued stale job never runs; stop() cuts a job short and keeps its
// result; jobs of their own lane always report; idle after the last job; destroying the owner
// while a job runs waits for it and delivers nothing.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QSignalSpy>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "plansight/gui/job_runner.h"

namespace plansight::gui {
namespace {

using namespace std::chrono_literals;

// Runs the event loop until `done` or 10 s.
template <class F>
bool process_until(F done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
  }
  return true;
}

// Blocks the runner's one worker until released, so that jobs queue behind it.
struct Gate {
  std::atomic<bool> open{false};
  void wait() const {
    while (!open.load()) std::this_thread::sleep_for(1ms);
  }
};

TEST(JobRunner, OnlyTheNewestJobOfALaneDelivers) {
  QObject owner;
  JobRunner jobs(&owner, 1);
  Gate gate;
  std::vector<int> delivered;
  std::atomic<int> ran{0};
  std::atomic<bool> first_started{false};
  jobs.start(0, [&](const JobRunner::Job& job) {
    first_started = true;
    gate.wait();
    ++ran;
    job.post([&] { delivered.push_back(1); });
  });
  ASSERT_TRUE(process_until([&] { return first_started.load(); }));
  jobs.start(0, [&](const JobRunner::Job& job) {  // queued behind the first, stale before its turn
    ++ran;
    job.post([&] { delivered.push_back(2); });
  });
  jobs.start(1, [&](const JobRunner::Job& job) { job.post([&] { delivered.push_back(10); }); });  // another lane
  jobs.start(0, [&](const JobRunner::Job& job) {
    ++ran;
    job.post([&] { delivered.push_back(3); });
  });
  gate.open = true;
  ASSERT_TRUE(process_until([&] { return !jobs.isBusy(); }));
  EXPECT_EQ(delivered, (std::vector<int>{10, 3})) << "the first ran but was stale; the second never ran";
  EXPECT_EQ(ran.load(), 2);
}

TEST(JobRunner, AStaleJobsCancelFlagIsSetAndCancelDropsItsResult) {
  QObject owner;
  JobRunner jobs(&owner, 2);
  std::atomic<bool> started{false}, saw_flag{false};
  bool delivered = false;
  jobs.start([&](const JobRunner::Job& job) {
    started = true;
    while (!job.cancel_flag()->load()) std::this_thread::sleep_for(1ms);  // as a CancelScope poll
    saw_flag = true;
    job.post([&] { delivered = true; });
  });
  ASSERT_TRUE(process_until([&] { return started.load(); }));
  jobs.cancel();
  ASSERT_TRUE(process_until([&] { return !jobs.isBusy(); }));
  EXPECT_TRUE(saw_flag.load());
  EXPECT_FALSE(delivered);
}

TEST(JobRunner, StopCutsAJobShortButKeepsItsResult) {
  QObject owner;
  JobRunner jobs(&owner, 1);
  std::atomic<bool> started{false};
  bool delivered = false, was_stopped = false;
  jobs.start([&](const JobRunner::Job& job) {
    started = true;
    while (!job.cancel_flag()->load()) std::this_thread::sleep_for(1ms);
    const bool stopped = job.cancel_flag()->load();
    job.post([&, stopped] {
      delivered = true;
      was_stopped = stopped;
    });
  });
  ASSERT_TRUE(process_until([&] { return started.load(); }));
  jobs.stop();
  ASSERT_TRUE(process_until([&] { return !jobs.isBusy(); }));
  EXPECT_TRUE(delivered) << "a stopped job is still the one whose result is wanted";
  EXPECT_TRUE(was_stopped);
}

TEST(JobRunner, OwnJobsAlwaysReportAndIdleComesOnceAfterTheLast) {
  QObject owner;
  JobRunner jobs(&owner, 1);
  QSignalSpy idle(&jobs, &JobRunner::idle);
  std::vector<int> delivered;
  for (int i = 0; i < 3; ++i) jobs.startOwn([&, i](const JobRunner::Job& job) { job.post([&, i] { delivered.push_back(i); }); });
  EXPECT_TRUE(jobs.isBusy());
  ASSERT_TRUE(process_until([&] { return !jobs.isBusy(); }));
  EXPECT_EQ(delivered, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(idle.count(), 1);

  Gate gate;
  bool late = false;
  jobs.startOwn([&](const JobRunner::Job& job) {
    gate.wait();
    job.post([&] { late = true; });
  });
  jobs.cancelAll();
  gate.open = true;
  ASSERT_TRUE(process_until([&] { return !jobs.isBusy(); }));
  EXPECT_FALSE(late) << "cancelAll() makes own jobs stale too";
  EXPECT_EQ(idle.count(), 2);
}

TEST(JobRunner, DestroyingTheOwnerWaitsForTheRunningJobAndDeliversNothing) {
  std::atomic<bool> started{false}, finished{false};
  bool delivered = false;
  {
    auto owner = std::make_unique<QObject>();
    auto jobs = std::make_unique<JobRunner>(owner.get(), 1);
    jobs->start([&](const JobRunner::Job& job) {
      started = true;
      while (!job.cancel_flag()->load()) std::this_thread::sleep_for(1ms);
      std::this_thread::sleep_for(20ms);  // still working after it was told to stop
      job.post([&] { delivered = true; });
      finished = true;
    });
    ASSERT_TRUE(process_until([&] { return started.load(); }));
    jobs.reset();  // as the owner's last member: first to go
    EXPECT_TRUE(finished.load()) << "the destructor waited for the running job";
    owner.reset();
  }
  QCoreApplication::processEvents();
  EXPECT_FALSE(delivered);
}

}  // namespace
}  // namespace plansight::gui
