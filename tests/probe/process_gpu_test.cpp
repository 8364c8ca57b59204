// choose_process_gpu (probe/src/process_gpu.h): the GPU a launched process takes under the
// launches cluster users make: per-task binding (one device visible, whatever the local rank),
// a host's GPUs all visible (local rank r takes device r), and more processes than GPUs on a
// host (refused with the numbers and the fix, unless NCCL may share a GPU between ranks).
#include <gtest/gtest.h>

#include <string>

#include "process_gpu.h"

namespace plansight::probe {
namespace {

int chosen(ProcessGpuView v) {
  auto d = choose_process_gpu(v);
  EXPECT_TRUE(d.ok()) << d.error_text();
  return d.ok() ? *d : -1;
}

TEST(ProcessGpu, PerTaskBindingTakesTheOnlyVisibleDevice) {
  // srun --gpus-per-task=1 on a 4-GPU node: each of 4 tasks sees its own GPU as device 0.
  for (int local_rank = 0; local_rank < 4; ++local_rank) EXPECT_EQ(chosen({local_rank, 4, 1, false}), 0);
  // srun's guessed local size (local rank + 1) changes nothing.
  EXPECT_EQ(chosen({3, 4, 1, false}), 0);
}

TEST(ProcessGpu, HostWideVisibilityTakesTheLocalRanksDevice) {
  for (int local_rank = 0; local_rank < 8; ++local_rank) EXPECT_EQ(chosen({local_rank, 8, 8, false}), local_rank);
  // Fewer processes than GPUs: the first ones.
  EXPECT_EQ(chosen({1, 2, 4, false}), 1);
}

TEST(ProcessGpu, MoreProcessesThanGpusAreRefusedWithTheNumbers) {
  auto d = choose_process_gpu({5, 8, 4, false});
  ASSERT_FALSE(d.ok());
  const std::string e = d.error_text();
  EXPECT_NE(e.find("local rank 5 of 8 processes"), std::string::npos) << e;
  EXPECT_NE(e.find("4 GPUs visible"), std::string::npos) << e;
  EXPECT_NE(e.find("--gpus-per-task=1"), std::string::npos) << e;
  // Local ranks below the count still get their own GPU; only the ones that would share fail.
  EXPECT_EQ(chosen({3, 8, 4, false}), 3);
}

TEST(ProcessGpu, SharingWrapsAroundOnlyWhenNcclAllowsIt) {
  EXPECT_EQ(chosen({5, 8, 4, true}), 1);
  EXPECT_EQ(chosen({7, 8, 4, true}), 3);
}

TEST(ProcessGpu, NoVisibleDeviceOrANegativeRankIsAnError) {
  EXPECT_FALSE(choose_process_gpu({0, 1, 0, false}).ok());
  EXPECT_FALSE(choose_process_gpu({-1, 1, 2, false}).ok());
}

}  // namespace
}  // namespace plansight::probe
