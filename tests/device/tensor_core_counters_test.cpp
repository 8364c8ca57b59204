// Tensor-core counters on a real device around a bf16 GEMM: with counters permitted the tensor
// pipe was active and executed MMA instructions; without permission (the Linux driver's default
// for non-admin users) the measurement says why and asks for the kernel-name fallback, which
// classifies cuBLAS GEMM kernels as tensor-core GEMMs. Per kernel (auto ranges, kernel replay): a
// bf16 GEMM then a GeLU, each its own range named after its kernel with its duration, the GEMM's
// tensor pipe active and the GeLU's idle (the verdict: tensor_metrics.h; on an H200 the GeLU read
// 2048 tensor instructions with the pipe at 0.000 %, so its instruction count is printed, not
// asserted); kernels past the counter data are counted as dropped.
// Without a device the test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "device_test_util.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/runtime/cuda/tensor_core_counters.h"
#include "plansight/runtime/cuda/tensor_metrics.h"

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

// A bf16 GEMM (cuBLASLt) followed by an element-wise bf16 GeLU over its output, synchronised.
struct GemmThenGelu {
  static constexpr int N = 512, C = 512, OC = 512;
  std::unique_ptr<kc::Blas> blas;
  device_test::DeviceBuffer<kc::bfloat16> inp{device_test::narrow_all<kc::bfloat16>(device_test::random_normal(N * C, 1))};
  device_test::DeviceBuffer<kc::bfloat16> weight{
      device_test::narrow_all<kc::bfloat16>(device_test::random_normal(OC * C, 2))};
  device_test::DeviceBuffer<kc::bfloat16> out{std::vector<kc::bfloat16>(static_cast<std::size_t>(N) * OC)};
  device_test::DeviceBuffer<kc::bfloat16> act{std::vector<kc::bfloat16>(static_cast<std::size_t>(N) * OC)};

  Result<bool> operator()() {
    if (kc::Status s = kc::matmul_forward(out.get(), inp.get(), weight.get(), nullptr, N, C, OC, *blas, nullptr); !s) {
      return make_error("workload", s.message());
    }
    if (kc::Status s = kc::gelu_forward(act.get(), out.get(), static_cast<std::size_t>(N) * OC, nullptr); !s) {
      return make_error("workload", s.message());
    }
    if (cudaDeviceSynchronize() != cudaSuccess) return make_error("workload", "cudaDeviceSynchronize");
    return true;
  }
};

void print_ranges(const PerKernelTensorCores& m) {
  std::printf("per-kernel counters on %s: %zu ranges, %zu launches, %zu dropped, %zu passes%s%s\n", m.chip.c_str(),
              m.ranges, m.launches, m.dropped_ranges, m.passes, m.names_note.empty() ? "" : "; ", m.names_note.c_str());
  for (const auto& k : m.kernels) {
    std::printf("  range %zu: %s: tensor active %.3f %% (%s), tensor instructions %.0f, duration %.3f us\n", k.range,
                k.kernel.empty() ? "(no name)" : k.kernel.c_str(), k.tensor_active_pct(),
                k.uses_tensor_cores() ? "tensor cores" : "no tensor cores", k.tensor_instructions(), k.duration_ns * 1e-3);
  }
}

TEST_F(TensorCoreCountersTest, PerKernelCountersNameEachKernelAndSeparateTheGemmFromTheGelu) {
  GemmThenGelu work;
  ASSERT_OK(kc::Blas::create(work.blas));
  ASSERT_CUDA(work.act.error());
  // Once before: cuBLASLt's first call may choose its algorithm or load modules; the measured run
  // is the steady state a training step sees.
  ASSERT_TRUE(work().ok());
  const auto measured = measure_tensor_cores_per_kernel(0, [&] { return work(); }, 64);
  ASSERT_TRUE(measured.ok()) << measured.error_text();
  if (!measured->from_counters) {
    ASSERT_FALSE(measured->fallback_reason.empty());
    GTEST_SKIP() << "counters not used: " << measured->fallback_reason;
  }
  print_ranges(*measured);
  ASSERT_EQ(measured->metrics.size(), tensor_core_metrics(measured->chip).all().size());
  EXPECT_EQ(measured->duration_metric, kKernelDurationMetric);
  // cuBLASLt may split a GEMM into more than one kernel (split-K's reduction); the GeLU is last.
  ASSERT_GE(measured->ranges, 2u);
  ASSERT_EQ(measured->kernels.size(), measured->ranges);
  EXPECT_EQ(measured->launches, measured->ranges) << "every launch the callbacks saw has a range";
  EXPECT_EQ(measured->dropped_ranges, 0u);
  EXPECT_TRUE(measured->names_note.empty()) << measured->names_note;
  const KernelTensorCores& gemm = measured->kernels.front();
  const KernelTensorCores& gelu = measured->kernels.back();
  EXPECT_EQ(gemm.range, 0u);
  EXPECT_EQ(gelu.range, measured->ranges - 1);
  EXPECT_FALSE(gemm.kernel.empty());
  EXPECT_EQ(gemm.kernel.find("gelu"), std::string::npos) << gemm.kernel;
  EXPECT_NE(gelu.kernel.find("gelu_forward_kernel"), std::string::npos) << gelu.kernel;
  // The verdict is the tensor pipe's activity; instruction counts are information (printed above).
  EXPECT_GT(gemm.tensor_active_pct(), 0.0) << gemm.kernel;
  EXPECT_TRUE(gemm.uses_tensor_cores()) << gemm.kernel;
  EXPECT_GT(gemm.tensor_instructions(), 0.0) << "MMA instructions of a 512^3 bf16 GEMM: " << gemm.kernel;
  EXPECT_EQ(gelu.tensor_active_pct(), 0.0) << "an element-wise kernel leaves the tensor pipe idle";
  EXPECT_FALSE(gelu.uses_tensor_cores()) << gelu.kernel;
  // Durations: positive, and far below a second for kernels of a few microseconds (a value in
  // other units, or a wall clock around the replay, would not be).
  for (const KernelTensorCores& k : measured->kernels) {
    EXPECT_GT(k.duration_ns, 0.0) << k.kernel;
    EXPECT_LT(k.duration_s(), 0.1) << k.kernel << ": " << k.duration_ns << " ns";
  }
  EXPECT_GE(measured->passes, 1u);
}

TEST_F(TensorCoreCountersTest, KernelsBeyondTheCounterDataAreCountedAsDropped) {
  GemmThenGelu work;
  ASSERT_OK(kc::Blas::create(work.blas));
  ASSERT_CUDA(work.act.error());
  ASSERT_TRUE(work().ok());
  const auto measured = measure_tensor_cores_per_kernel(0, [&] { return work(); }, 1);
  ASSERT_TRUE(measured.ok()) << measured.error_text();
  if (!measured->from_counters) GTEST_SKIP() << "counters not used: " << measured->fallback_reason;
  print_ranges(*measured);
  EXPECT_LE(measured->ranges, 1u);
  EXPECT_GE(measured->dropped_ranges, 1u) << "the GeLU (at least) had no room: dropped, not a zero";
  EXPECT_EQ(measured->kernels.size(), measured->ranges);
}

TEST(TensorCoreCountersArguments, NoRoomForAnyKernelIsAnError) {
  const auto measured = measure_tensor_cores_per_kernel(0, [] { return Result<bool>(true); }, 0);
  ASSERT_FALSE(measured.ok());
  EXPECT_EQ(measured.errors().front().field, "max_kernels");
}

}  // namespace
}  // namespace plansight::runtime::cuda
