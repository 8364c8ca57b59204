// NCCL version decoding (both encodings of nccl.h's NCCL_VERSION), the multi-rank-per-GPU rule,
// and the tensor-core metric names chosen per chip family.
#include <gtest/gtest.h>

#include "plansight/runtime/cuda/nccl_version.h"
#include "plansight/runtime/cuda/tensor_metrics.h"

namespace plansight::runtime::cuda {
namespace {

TEST(NcclVersion, DecodesBothEncodings) {
  const NcclVersion v = decode_nccl_version(22809);  // nccl.h 2.28.9: NCCL_VERSION_CODE 22809
  EXPECT_EQ(v.to_string(), "2.28.9");
  EXPECT_EQ(v.code(), 22809);
  const NcclVersion old = decode_nccl_version(2804);  // 2.8.4, before the 2.9 encoding change
  EXPECT_EQ(old.to_string(), "2.8.4");
  EXPECT_EQ(old.code(), 2804);
  EXPECT_EQ(decode_nccl_version(23001).to_string(), "2.30.1");
}

TEST(NcclVersion, SeveralRanksPerGpuNeed230AndTheVariable) {
  const auto old = multi_rank_gpu_support({2, 28, 9}, "1");
  EXPECT_FALSE(old.available);
  EXPECT_NE(old.reason.find("NCCL 2.28.9 < 2.30.0"), std::string::npos) << old.reason;
  const auto unset = multi_rank_gpu_support({2, 30, 0}, nullptr);
  EXPECT_FALSE(unset.available);
  EXPECT_NE(unset.reason.find("NCCL_MULTI_RANK_GPU_ENABLE is unset"), std::string::npos) << unset.reason;
  EXPECT_FALSE(multi_rank_gpu_support({2, 31, 2}, "0").available);
  EXPECT_TRUE(multi_rank_gpu_support({2, 30, 0}, "1").available);
  EXPECT_TRUE(multi_rank_gpu_support({3, 0, 0}, "1").available);
}

TEST(TensorMetrics, HopperCountsWarpgroupMmaAmpereCountsHmma) {
  const auto hopper = tensor_core_metrics("GH100");
  EXPECT_EQ(hopper.active_pct,
            "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(hopper.all().size(), 3u);
  const auto ampere = tensor_core_metrics("GA100");
  EXPECT_EQ(ampere.active_pct, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(ampere.all(), (std::vector<std::string>{ampere.active_pct, "sm__inst_executed_pipe_tensor_op_hmma.sum"}));
  EXPECT_TRUE(tensor_core_metrics("GB100").all().empty()) << "Blackwell: fall back to kernel-name rules";
}

}  // namespace
}  // namespace plansight::runtime::cuda
