// CommGuard (runtime/cuda/comm_guard.h), the lock and abort protocol of the NCCL communicator,
// with counters in place of ncclCommAbort/ncclCommDestroy: an idle handle is aborted at once; an
// abort while a thread is inside a call neither waits for it nor frees the handle under it, and
// that thread aborts the handle as it leaves; the handle is freed exactly once, by the right
// function; and under many racing users and an abort, the abort never runs during a use.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "plansight/runtime/cuda/comm_guard.h"

namespace plansight::runtime::cuda {
namespace {

struct Counters {
  std::atomic<int> aborts{0}, destroys{0};
  std::atomic<int> inside{0};          // threads inside an operation now
  std::atomic<bool> freed_in_use{false};
  void freed(bool abort) {
    if (inside.load() != 0) freed_in_use = true;
    (abort ? aborts : destroys)++;
  }
};

TEST(CommGuard, ClosingDestroysOnceAndLaterUsesAreRefused) {
  Counters c;
  {
    CommGuard g([&] { c.freed(true); }, [&] { c.freed(false); });
    auto s = g.use([] { return ok_status(); });
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(*s);
    g.close();
    EXPECT_FALSE(g.use([] { return ok_status(); }).has_value());
  }  // the destructor closes again: nothing more
  EXPECT_EQ(c.destroys.load(), 1);
  EXPECT_EQ(c.aborts.load(), 0);
}

TEST(CommGuard, AnIdleHandleIsAbortedAtOnceAndNeverDestroyed) {
  Counters c;
  {
    CommGuard g([&] { c.freed(true); }, [&] { c.freed(false); });
    g.abort();
    EXPECT_EQ(c.aborts.load(), 1);
    EXPECT_TRUE(g.abort_requested());
    bool ran = false;
    EXPECT_FALSE(g.use([&] {
                   ran = true;
                   return ok_status();
                 }).has_value());
    EXPECT_FALSE(ran);
    g.abort();
  }
  EXPECT_EQ(c.aborts.load(), 1);
  EXPECT_EQ(c.destroys.load(), 0);
}

TEST(CommGuard, AnAbortDuringACallIsLeftToTheCaller) {
  Counters c;
  CommGuard g([&] { c.freed(true); }, [&] { c.freed(false); });
  std::mutex m;
  std::condition_variable cv;
  bool entered = false, release = false;
  std::optional<Status> result;
  std::thread user([&] {
    result = g.use([&] {
      c.inside++;
      std::unique_lock lock(m);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      c.inside--;
      return Status(make_error("nccl", "the call's own error"));
    });
  });
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return entered; });
  }
  // The call is blocked: abort() returns at once and frees nothing under it.
  const auto t0 = std::chrono::steady_clock::now();
  g.abort();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(c.aborts.load(), 0);
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  user.join();
  // The caller got its call's status, then aborted the handle as it left.
  ASSERT_TRUE(result.has_value());
  EXPECT_NE(result->error_text().find("the call's own error"), std::string::npos);
  EXPECT_EQ(c.aborts.load(), 1);
  EXPECT_FALSE(c.freed_in_use.load());
  g.close();
  EXPECT_EQ(c.destroys.load(), 0);
}

TEST(CommGuard, RacingUsersAndOneAbortFreeOnceAndNeverDuringAUse) {
  for (int round = 0; round < 50; ++round) {
    Counters c;
    {
      CommGuard g([&] { c.freed(true); }, [&] { c.freed(false); });
      std::atomic<bool> go{false};
      std::vector<std::thread> users;
      for (int u = 0; u < 4; ++u) {
        users.emplace_back([&] {
          while (!go.load()) std::this_thread::yield();
          for (int i = 0; i < 200; ++i) {
            g.use([&] {
              c.inside++;
              std::this_thread::yield();
              c.inside--;
              return ok_status();
            });
          }
        });
      }
      go = true;
      std::this_thread::sleep_for(std::chrono::microseconds(50 * round));
      g.abort();
      for (auto& t : users) t.join();
    }
    EXPECT_EQ(c.aborts.load(), 1) << "round " << round;
    EXPECT_EQ(c.destroys.load(), 0) << "round " << round;
    EXPECT_FALSE(c.freed_in_use.load()) << "round " << round;
  }
}

}  // namespace
}  // namespace plansight::runtime::cuda
