// DeviceAllocator: bytes accounted per category with peaks, released on destruction; an
// allocation larger than the device is the "does not fit" error (not a crash), after which the
// device still allocates. Without a device every test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "device_test_util.h"
#include "plansight/runtime/cuda/device_allocator.h"

namespace plansight::runtime::cuda {
namespace {

using device_test::no_device_reason;

class DeviceAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override { PLANSIGHT_SKIP_WITHOUT_DEVICE(); }
};

TEST_F(DeviceAllocatorTest, AccountsBytesPerCategoryWithPeaks) {
  DeviceAllocator allocator(0);
  {
    auto weights = allocator.allocate(MemoryCategory::weights, 1 << 20, "wte");
    ASSERT_TRUE(weights.ok()) << weights.error_text();
    auto activations = allocator.allocate(MemoryCategory::activations, 3 << 20, "block 0 qkv");
    ASSERT_TRUE(activations.ok()) << activations.error_text();
    EXPECT_NE(weights->data(), nullptr);
    EXPECT_EQ(weights->bytes(), std::size_t{1} << 20);
    const MemoryUsage now = allocator.tracker().current();
    EXPECT_EQ(now[MemoryCategory::weights], 1 << 20);
    EXPECT_EQ(now[MemoryCategory::activations], 3 << 20);
    activations->reset();
    EXPECT_EQ(allocator.tracker().current()[MemoryCategory::activations], 0);
  }
  EXPECT_EQ(allocator.tracker().current().total(), 0) << "buffers release their bytes when destroyed";
  EXPECT_EQ(allocator.tracker().peak_total(), 4 << 20);
}

TEST_F(DeviceAllocatorTest, TooLargeIsDoesNotFitAndTheDeviceStaysUsable) {
  DeviceAllocator allocator(0);
  auto info = device_memory_info(0);
  ASSERT_TRUE(info.ok()) << info.error_text();
  ASSERT_GT(info->total_bytes, 0);
  auto held = allocator.allocate(MemoryCategory::weights, 1 << 20, "wte");
  ASSERT_TRUE(held.ok()) << held.error_text();
  const std::size_t too_much = static_cast<std::size_t>(info->total_bytes) + (std::size_t{1} << 30);
  auto failed = allocator.allocate(MemoryCategory::activations, too_much, "everything at once");
  ASSERT_FALSE(failed.ok());
  const std::string text = failed.error_text();
  EXPECT_NE(text.find("does not fit: needed "), std::string::npos) << text;
  EXPECT_NE(text.find(", free "), std::string::npos) << text;
  EXPECT_NE(text.find("weights 1.00 MiB"), std::string::npos) << text;
  EXPECT_EQ(allocator.tracker().current()[MemoryCategory::activations], 0);
  EXPECT_FALSE(allocator.check_fits(MemoryCategory::activations, too_much, "everything").ok());
  EXPECT_TRUE(allocator.check_fits(MemoryCategory::activations, 1 << 20, "a little").ok());
  auto after = allocator.allocate(MemoryCategory::activations, 1 << 20, "after the failure");
  ASSERT_TRUE(after.ok()) << after.error_text();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failed cudaMalloc left no error behind";
}

TEST_F(DeviceAllocatorTest, CountsIntoTheRanksTracker) {
  MemoryTracker tracker;
  DeviceAllocator allocator(0, &tracker);
  auto grads = allocator.allocate(MemoryCategory::gradients, 4096, "grads");
  ASSERT_TRUE(grads.ok()) << grads.error_text();
  EXPECT_EQ(tracker.current()[MemoryCategory::gradients], 4096);
  DeviceBuffer moved = std::move(*grads);
  EXPECT_EQ(moved.bytes(), 4096u);
  moved.reset();
  EXPECT_EQ(tracker.current()[MemoryCategory::gradients], 0);
}

}  // namespace
}  // namespace plansight::runtime::cuda
