// What needs no GPU of the NCCL communicator: the library's run-time version (ncclGetVersion)
// agrees with the nccl.h it was built against (one toolkit install), a world with two ranks on one GPU is refused with the
// reason (this NCCL is older than 2.30, or NCCL_MULTI_RANK_GPU_ENABLE is unset), and the
// multi-process bootstrap says it is not implemented. Label `unit`.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plansight/runtime/cuda/nccl_communicator.h"

namespace plansight::runtime::cuda {
namespace {

TEST(NcclRuntime, VersionMatchesTheHeader) {
  const auto runtime = nccl_runtime();
  ASSERT_TRUE(runtime.ok()) << runtime.error_text();
  EXPECT_EQ(runtime->version.to_string(), runtime->built_with.to_string());
  EXPECT_GE(runtime->version.major, 2);
  EXPECT_FALSE(runtime->multi_rank_gpu.reason.empty());
}

TEST(NcclRuntime, TwoRanksOnOneGpuNeedMultiRankSupport) {
  const auto runtime = nccl_runtime();
  ASSERT_TRUE(runtime.ok()) << runtime.error_text();
  if (runtime->multi_rank_gpu.available) GTEST_SKIP() << "this NCCL allows it: " << runtime->multi_rank_gpu.reason;
  const auto world = NcclWorld::create({0, 0});
  ASSERT_FALSE(world.ok());
  EXPECT_EQ(world.errors()[0].field, "nccl.devices");
  EXPECT_NE(world.error_text().find("ranks 0 and 1 on GPU 0"), std::string::npos) << world.error_text();
  EXPECT_NE(world.error_text().find(runtime->multi_rank_gpu.reason), std::string::npos) << world.error_text();
}

TEST(NcclRuntime, MultiProcessBootstrapIsNotImplemented) {
  const auto world = NcclWorld::from_environment();
  ASSERT_FALSE(world.ok());
  EXPECT_NE(world.error_text().find("not implemented"), std::string::npos);
}

TEST(NcclRuntime, NoDevicesIsAnError) { EXPECT_FALSE(NcclWorld::create({}).ok()); }

}  // namespace
}  // namespace plansight::runtime::cuda
