// The CPU backend's half of dynamic loss scaling (backend.h): a rank's inf/NaN gradient sets the
// step's flag, the world all-reduce makes every rank see it, a skipping AdamW leaves weights and
// moments untouched on a flagged step and updates on a clean one, and take_loss() reports and
// clears the flag. The GPU backend's twin is checked in tests/device.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "backend.h"
#include "plansight/runtime/communicator.h"

namespace plansight::probe {
namespace {

TEST(CpuLossScaling, ANonFiniteGradientOnOneRankSkipsTheUpdateOnEvery) {
  constexpr int kRanks = 2;
  runtime::InProcessWorld world(kRanks);
  std::vector<std::vector<float>> weights(kRanks);
  // char, not bool: std::vector<bool> packs both ranks' flags into one word, and the two
  // threads writing their own flag at once would race on it (a flaky failure).
  std::vector<char> flagged(kRanks, 0), clean_after(kRanks, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      auto comm = world.world(r);
      auto be = make_cpu_backend();
      std::vector<float> master = {1.0f, 2.0f, 3.0f}, m(3, 0.0f), v(3, 0.0f), grads = {0.5f, -0.5f, 0.25f};
      if (r == 1) grads[2] = std::numeric_limits<float>::infinity();
      kernels::AdamWSettings settings;
      settings.learning_rate = 0.1f;
      settings.weight_decay = 0.0f;
      be->flag_nonfinite(grads.data(), grads.size());
      ASSERT_TRUE(be->reduce_nonfinite(*comm));
      be->adamw(master.data(), nullptr, m.data(), v.data(), grads.data(), grads.size(), settings, 1, 1.0f, true);
      EXPECT_EQ(m, std::vector<float>(3, 0.0f)) << "rank " << r << ": the moments stay";
      (void)be->take_loss();
      flagged[r] = be->nonfinite_at_take();
      // The next step is clean: the flag was cleared, and the update applies.
      grads = {0.5f, -0.5f, 0.25f};
      be->flag_nonfinite(grads.data(), grads.size());
      ASSERT_TRUE(be->reduce_nonfinite(*comm));
      be->adamw(master.data(), nullptr, m.data(), v.data(), grads.data(), grads.size(), settings, 1, 1.0f, true);
      (void)be->take_loss();
      clean_after[r] = !be->nonfinite_at_take();
      weights[r] = master;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(flagged[r]) << "rank " << r << " sees rank 1's inf";
    EXPECT_TRUE(clean_after[r]) << "rank " << r;
    // One AdamW step of lr 0.1 moves each weight by lr * sign(g) (m^/sqrt(v^) = +-1).
    EXPECT_NEAR(weights[r][0], 0.9f, 1e-5) << "rank " << r;
    EXPECT_NEAR(weights[r][1], 2.1f, 1e-5) << "rank " << r;
    EXPECT_NEAR(weights[r][2], 2.9f, 1e-5) << "rank " << r;
  }
}

}  // namespace
}  // namespace plansight::probe
