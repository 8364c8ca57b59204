// The words of device-memory accounting: byte formatting (binary units, three significant
// digits) and the "does not fit" diagnostic with the free/total bytes and what the rank holds.
#include <gtest/gtest.h>

#include "plansight/runtime/cuda/memory_fit.h"

namespace plansight::runtime::cuda {
namespace {

TEST(MemoryFit, FormatsBytesInBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(1023), "1023 bytes");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(12 * 1024 + 512), "12.5 KiB");
  EXPECT_EQ(format_bytes(std::int64_t{3} << 29), "1.50 GiB");
  EXPECT_EQ(format_bytes(std::int64_t{80} << 30), "80.0 GiB");
  EXPECT_EQ(format_bytes(std::int64_t{512} << 20), "512 MiB");
  EXPECT_EQ(format_bytes(-(std::int64_t{2} << 20)), "-2.00 MiB");
}

TEST(MemoryFit, CategoryNamesFollowTheEstimatorsBreakdown) {
  EXPECT_EQ(category_name(MemoryCategory::weights), "weights");
  EXPECT_EQ(category_name(MemoryCategory::gradients), "gradients");
  EXPECT_EQ(category_name(MemoryCategory::optimizer), "optimizer");
  EXPECT_EQ(category_name(MemoryCategory::activations), "activations");
  EXPECT_EQ(category_name(MemoryCategory::buffers), "buffers");
}

TEST(MemoryFit, DoesNotFitSaysNeededFreeAndWhatIsHeld) {
  MemoryUsage held;
  held.bytes[static_cast<std::size_t>(MemoryCategory::weights)] = std::int64_t{2} << 30;
  held.bytes[static_cast<std::size_t>(MemoryCategory::optimizer)] = std::int64_t{4} << 30;
  const Diagnostic d = does_not_fit("block 3 qkv", MemoryCategory::activations, std::int64_t{3} << 29,
                                    std::int64_t{3} << 28, std::int64_t{80} << 30, 1, held);
  EXPECT_EQ(d.severity, Severity::error);
  EXPECT_EQ(d.field, "memory.activations");
  EXPECT_EQ(d.message.rfind("does not fit: needed 1.50 GiB, free 768 MiB (of 80.0 GiB on device 1)", 0), 0u)
      << d.message;
  EXPECT_NE(d.message.find("for activations (block 3 qkv)"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("weights 2.00 GiB, gradients 0 bytes, optimizer 4.00 GiB"), std::string::npos) << d.message;
}

}  // namespace
}  // namespace plansight::runtime::cuda
