// Tensor-core counters on a real device around a bf16 GEMM: with counters permitted the tensor
// pipe was active and executed MMA instructions; without permission (the Linux driver's default
// for non-admin users) the measurement says why and asks for the kernel-name fallback, which
// classifies cuBLAS GEMM kernels as tensor-core GEMMs. Without a device the test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>

#include "device_test_util.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/runtime/cuda/tensor_core_counters.h"

namespace plansight::runtime::cuda {
namespace {

namespace kc = plansight::kernels::cuda;

class TensorCoreCountersTest : public ::testing::Test {
 protected:
  void SetUp() override { PLANSIGHT_SKIP_WITHOUT_DEVICE(); }
};

TEST_F(TensorCoreCountersTest, Bf16GemmUsesTheTensorPipeOrFallsBackWithAReason) {
  const int N = 512, C = 512, OC = 512;
  std::unique_ptr<kc::Blas> blas;
  ASSERT_OK(kc::Blas::create(blas));
  device_test::DeviceBuffer<kc::bfloat16> inp(device_test::narrow_all<kc::bfloat16>(device_test::random_normal(N * C, 1)));
  device_test::DeviceBuffer<kc::bfloat16> weight(
      device_test::narrow_all<kc::bfloat16>(device_test::random_normal(OC * C, 2)));
  device_test::DeviceBuffer<kc::bfloat16> out(std::vector<kc::bfloat16>(static_cast<std::size_t>(N) * OC));
  ASSERT_CUDA(out.error());
  const auto measured = measure_tensor_cores(0, [&]() -> Result<bool> {
    const kc::Status s = kc::matmul_forward(out.get(), inp.get(), weight.get(), nullptr, N, C, OC, *blas, nullptr);
    if (!s) return make_error("workload", s.message());
    if (cudaDeviceSynchronize() != cudaSuccess) return make_error("workload", "cudaDeviceSynchronize");
    return true;
  });
  ASSERT_TRUE(measured.ok()) << measured.error_text();
  if (!measured->from_counters) {
    // A machine that refuses profiling (a container, another profiler holding the counters):
    // reported as a skip with the reason, not as a pass that measured nothing.
    ASSERT_FALSE(measured->fallback_reason.empty());
    GTEST_SKIP() << "counters not used: " << measured->fallback_reason;
  }
  ASSERT_EQ(measured->values.size(), measured->metrics.size());
  EXPECT_GT(measured->values[0], 0.0) << measured->metrics[0] << " on " << measured->chip;
  double instructions = 0;
  for (std::size_t i = 1; i < measured->values.size(); ++i) instructions += measured->values[i];
  EXPECT_GT(instructions, 0.0) << "MMA instructions of a 512^3 bf16 GEMM";
  EXPECT_GE(measured->passes, 1u);
}

}  // namespace
}  // namespace plansight::runtime::cuda
