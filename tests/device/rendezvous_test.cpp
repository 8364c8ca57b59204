// Rendezvous, the host meeting point of the device communicator's virtual ranks: every member
// gets every member's value of the same round in rank order, over many rounds run by threads at
// uneven speeds; abort() wakes a waiting member with the reason; bad ranks are errors.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "plansight/runtime/cuda/rendezvous.h"

namespace plansight::runtime::cuda {
namespace {

TEST(Rendezvous, EveryMemberSeesEveryValueOfItsRound) {
  constexpr int kRanks = 5, kRounds = 2000;
  Rendezvous<int> meeting(kRanks);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      for (int round = 0; round < kRounds; ++round) {
        if (r == 0 && round % 100 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // a slow rank
        auto values = meeting.exchange(r, round * 100 + r);
        if (!values.ok() || values->size() != kRanks) {
          ++failures;
          return;
        }
        for (int q = 0; q < kRanks; ++q) {
          if ((*values)[static_cast<std::size_t>(q)] != round * 100 + q) ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Rendezvous, AbortWakesAWaitingMemberWithTheReason) {
  Rendezvous<int> meeting(2);
  Result<std::vector<int>> result = std::vector<int>{};
  std::thread waiter([&] { result = meeting.exchange(0, 7); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  meeting.abort("rank 1 failed: out of memory");
  waiter.join();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error_text().find("aborted: rank 1 failed: out of memory"), std::string::npos) << result.error_text();
  const auto later = meeting.exchange(1, 8);
  ASSERT_FALSE(later.ok()) << "calls after abort fail at once";
}

TEST(Rendezvous, RankOutsideTheGroupIsAnError) {
  Rendezvous<int> meeting(3);
  const auto result = meeting.exchange(3, 0);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error_text().find("rank 3 of a group of 3; valid: 0..2"), std::string::npos) << result.error_text();
}

TEST(Rendezvous, SingleMemberReturnsAtOnce) {
  Rendezvous<int> meeting(1);
  const auto result = meeting.exchange(0, 42);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, std::vector<int>{42});
}

}  // namespace
}  // namespace plansight::runtime::cuda
