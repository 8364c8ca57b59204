// The CUPTI activity tracer on a real device: a copy, a memset, a kernel launched inside an NVTX
// range on a named stream; the records arrive after flush() and map to a Timeline whose device
// spans sit inside the CPU clock window of the work, with the range's phase. The tracer starts
// before the first NVTX call of the process, so it can point NVTX at CUPTI (CUPTI's NVTX support).
// Without a device every test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "device_test_util.h"
#include "plansight/kernels/cuda/gelu.h"
#include "plansight/runtime/cuda/activity_timeline.h"
#include "plansight/runtime/cuda/activity_tracer.h"
#include "plansight/runtime/cuda/nvtx_ranges.h"
#include "plansight/runtime/tracer.h"

namespace plansight::runtime::cuda {
namespace {

namespace est = plansight::estimator;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class ActivityTracerTest : public ::testing::Test {
 protected:
  void SetUp() override { PLANSIGHT_SKIP_WITHOUT_DEVICE(); }
};

TEST_F(ActivityTracerTest, RecordsKernelsCopiesAndRangesOnTheCpuClock) {
  auto tracer = ActivityTracer::start();
  ASSERT_TRUE(tracer.ok()) << tracer.error_text();
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::size_t n = 1 << 20;
  std::vector<float> host(n, 0.5f);
  float* in = nullptr;
  float* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&in, n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&out, n * sizeof(float)));

  install_nvtx_range_hooks();
  const std::int64_t cpu_begin = steady_ns();
  ASSERT_CUDA(cudaMemcpyAsync(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  ASSERT_CUDA(cudaMemsetAsync(out, 0, n * sizeof(float), stream));
  range_push("forward mlp");
  ASSERT_OK(kernels::cuda::gelu_forward(out, in, n, stream));
  range_pop();
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  const std::int64_t cpu_end = steady_ns();
  remove_range_hooks();

  ASSERT_TRUE((*tracer)->flush().ok());
  const auto records = (*tracer)->take_records();
  EXPECT_EQ((*tracer)->dropped_records(), 0u);
  const auto alignment = (*tracer)->align_with(steady_ns);
  ASSERT_TRUE(alignment.ok()) << alignment.error_text();

  ActivityTimeline builder;
  builder.set_clock_offset_ns(alignment->offset_ns);
  builder.assign_thread(ActivityTracer::current_thread_id(), 0);
  const est::Timeline timeline = builder.build(records, "traced", est::KernelClassifier());
  bool kernel = false, copy = false, set = false, range = false;
  // The alignment's own uncertainty, and 20 us for CUPTI's conversion of GPU timestamps to its
  // CPU clock (the GPU's global timer is synchronised with the CPU's periodically, not exactly):
  // a kernel outside the window by more than that is on the wrong clock.
  const std::int64_t slack = alignment->uncertainty_ns + 20000;
  for (const auto& track : timeline.tracks) {
    for (const auto& span : track.spans) {
      const std::string& name = timeline.name_of(span);
      if (span.kind == est::SpanKind::kernel && name.find("gelu_forward_kernel") != std::string::npos) {
        kernel = true;
        if ((*tracer)->nvtx_injected()) {
          EXPECT_EQ(span.phase, est::Phase::forward);
        }
        EXPECT_GE(span.start_ns, cpu_begin - slack);
        EXPECT_LE(span.end_ns(), cpu_end + slack);
      }
      copy |= span.kind == est::SpanKind::memcpy && span.bytes == static_cast<double>(n * sizeof(float));
      set |= span.kind == est::SpanKind::memset;
      range |= span.kind == est::SpanKind::annotation && name == "forward mlp";
    }
  }
  EXPECT_TRUE(kernel);
  EXPECT_TRUE(copy);
  EXPECT_TRUE(set);
  if ((*tracer)->nvtx_injected()) {
    EXPECT_TRUE(range) << "NVTX ranges arrive through CUPTI when NVTX_INJECTION64_PATH names libcupti";
  }
  cudaFree(in);
  cudaFree(out);
  cudaStreamDestroy(stream);
}

TEST_F(ActivityTracerTest, OnlyOneTracerAtATime) {
  auto first = ActivityTracer::start();
  ASSERT_TRUE(first.ok()) << first.error_text();
  const auto second = ActivityTracer::start();
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error_text().find("another ActivityTracer"), std::string::npos);
}

}  // namespace
}  // namespace plansight::runtime::cuda
