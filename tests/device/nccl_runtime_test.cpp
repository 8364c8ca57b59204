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

// A process's part of a world spread over processes: the id must be an ncclUniqueId's bytes,
// the rank inside the world, and world() serves only this process's rank.
TEST(NcclRuntime, JoiningAWorldOfProcessesChecksItsArguments) {
  const std::string id(128, '\0');  // NCCL_UNIQUE_ID_BYTES
  auto short_id = NcclWorld::join("abc", 0, 2, 0);
  ASSERT_FALSE(short_id.ok());
  EXPECT_EQ(short_id.errors()[0].field, "nccl.unique_id");
  auto beyond = NcclWorld::join(id, 2, 2, 0);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.errors()[0].field, "nccl.rank");
  EXPECT_FALSE(NcclWorld::join(id, 0, 2, -1).ok());
  auto joined = NcclWorld::join(id, 1, 2, 0);
  ASSERT_TRUE(joined.ok()) << joined.error_text();
  EXPECT_EQ((*joined)->size(), 2);
  EXPECT_EQ((*joined)->device_of(1), 0);
  EXPECT_EQ((*joined)->device_of(0), -1);
  auto other = (*joined)->world(0, nullptr);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error_text().find("another process"), std::string::npos) << other.error_text();
}

TEST(NcclRuntime, UniqueIdHasNcclsSize) {
  auto id = nccl_unique_id();
  if (!id) GTEST_SKIP() << "ncclGetUniqueId failed here: " << id.error_text();
  EXPECT_EQ(id->size(), 128u);
}

TEST(NcclRuntime, NoDevicesIsAnError) { EXPECT_FALSE(NcclWorld::create({}).ok()); }

}  // namespace
}  // namespace plansight::runtime::cuda
