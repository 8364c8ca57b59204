// Tensor-core share of a measured step from hand-made timelines: kernel time by flag, phase and
// kernel class, collectives counted as kernel time, host annotations and copies not, and the
// most expensive kernels by total time.
#include <gtest/gtest.h>

#include "tensor_core_share.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

est::Span span(est::Timeline& t, const std::string& name, std::int64_t ns, est::SpanKind kind, est::Phase phase, bool tc) {
  est::Span s;
  s.name_id = t.intern(name);
  s.duration_ns = ns;
  s.kind = kind;
  s.phase = phase;
  s.tensor_core = tc;
  return s;
}

TEST(TensorCoreShare, SharesByStepPhaseClassAndTopKernels) {
  est::Timeline t;
  est::Track compute;
  compute.lane = est::Lane::compute;
  const char* gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
  compute.spans.push_back(span(t, gemm, 600, est::SpanKind::kernel, est::Phase::forward, true));
  compute.spans.push_back(span(t, gemm, 1200, est::SpanKind::kernel, est::Phase::backward, true));
  compute.spans.push_back(span(t, "gelu_forward_kernel", 200, est::SpanKind::kernel, est::Phase::forward, false));
  compute.spans.push_back(span(t, "memcpy DtoD", 5000, est::SpanKind::memcpy, est::Phase::forward, false));
  est::Track comm;
  comm.lane = est::Lane::communication;
  comm.spans.push_back(span(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, est::SpanKind::collective,
                            est::Phase::communication, false));
  est::Track host;
  host.lane = est::Lane::host;
  host.spans.push_back(span(t, "qkv forward", 9000, est::SpanKind::annotation, est::Phase::forward, false));
  t.tracks = {compute, comm, host};

  const TensorCoreShare s = tensor_core_share(t);
  EXPECT_DOUBLE_EQ(s.step.seconds, 3000e-9) << "kernels and collectives, not copies or annotations";
  EXPECT_DOUBLE_EQ(s.step.tensor_core_seconds, 1800e-9);
  EXPECT_DOUBLE_EQ(s.step.share(), 0.6);
  EXPECT_DOUBLE_EQ(s.by_phase.at("forward").share(), 600.0 / 800.0);
  EXPECT_DOUBLE_EQ(s.by_phase.at("backward").share(), 1.0);
  EXPECT_DOUBLE_EQ(s.by_phase.at("communication").share(), 0.0);
  EXPECT_DOUBLE_EQ(s.by_kernel_class.at("tensor_core_gemm").seconds, 1800e-9);
  EXPECT_DOUBLE_EQ(s.by_kernel_class.at("communication").seconds, 1000e-9);
  ASSERT_EQ(s.top_kernels.size(), 3u);
  EXPECT_EQ(s.top_kernels[0].name, gemm);
  EXPECT_EQ(s.top_kernels[0].launches, 2);
  EXPECT_DOUBLE_EQ(s.top_kernels[0].seconds, 1800e-9);
  EXPECT_EQ(s.source, "kernel-name rules");

  const auto j = to_json(s);
  EXPECT_DOUBLE_EQ(j["step"]["share"].get<double>(), 0.6);
  EXPECT_EQ(j["top_kernels"].size(), 3u);
}

TEST(TensorCoreShare, AnEmptyTimelineHasNoShare) {
  const TensorCoreShare s = tensor_core_share(est::Timeline{});
  EXPECT_EQ(s.step.seconds, 0.0);
  EXPECT_EQ(s.step.share(), 0.0);
  EXPECT_TRUE(s.top_kernels.empty());
}

}  // namespace
}  // namespace plansight::probe
