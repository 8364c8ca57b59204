// split_any dispatches on the communicator type: in-process ranks (no GPU needed, label `unit`)
// split as runtime::split does; the device case is covered by device_communicator_test.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "plansight/runtime/cuda/device_communicator.h"
#include "plansight/runtime/cuda/split_any.h"

namespace plansight::runtime::cuda {
namespace {

TEST(SplitAny, SplitsInProcessCommunicators) {
  InProcessWorld world(4);
  std::vector<int> sizes(4), ranks(4);
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      auto comm = world.world(r);
      EXPECT_FALSE(is_device_communicator(*comm));
      auto half = split_any(*comm, r / 2, r, "tp");
      if (!half || !*half) {
        errors[static_cast<std::size_t>(r)] = half ? "null" : half.error_text();
        return;
      }
      sizes[static_cast<std::size_t>(r)] = (*half)->size();
      ranks[static_cast<std::size_t>(r)] = (*half)->rank();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors, std::vector<std::string>(4));
  EXPECT_EQ(sizes, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(ranks, (std::vector<int>{0, 1, 0, 1}));
}

}  // namespace
}  // namespace plansight::runtime::cuda
