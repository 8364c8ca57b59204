// Tensor-core share of kernel time (tensor_core_rows.h, predicted_gemm_share.h) on hand-made
// timelines whose sums are worked out below: a measured span is on tensor cores by its flag or
// its name's class; a predicted op span counts its phase's GEMM share; sends and host time are
// not kernel time; the rows pair both sides in phase and class order.
#include <gtest/gtest.h>

#include "plansight/core/predicted_gemm_share.h"
#include "plansight/core/tensor_core_rows.h"
#include "plansight/estimator/presets.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

est::Span span(est::Timeline& t, const std::string& name, std::int64_t start_ms, std::int64_t ms, est::Phase phase,
               est::SpanKind kind = est::SpanKind::kernel, bool tensor_core = false) {
  est::Span s;
  s.start_ns = start_ms * 1'000'000;
  s.duration_ns = ms * 1'000'000;
  s.name_id = t.intern(name);
  s.phase = phase;
  s.kind = kind;
  s.tensor_core = tensor_core;
  return s;
}

// Forward: 3 ms cuBLAS GEMM + 1 ms layernorm; backward: 4 ms of a GEMM the rules do not know but
// the probe flagged + 2 ms element-wise; 1 ms NCCL all-reduce; a 5 ms send and 9 ms of host time.
est::Timeline measured() {
  est::Timeline t;
  t.source = est::TimelineSource::measured;
  est::Track compute, comm, host;
  compute.spans = {span(t, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 0, 3, est::Phase::forward,
                        est::SpanKind::kernel, true),
                   span(t, "layernorm_forward_kernel", 3, 1, est::Phase::forward),
                   span(t, "matmul_backward_kernel", 4, 4, est::Phase::backward, est::SpanKind::kernel, true),
                   span(t, "gelu_backward_kernel", 8, 2, est::Phase::backward)};
  comm.lane = est::Lane::communication;
  comm.spans = {span(t, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 10, 1, est::Phase::communication, est::SpanKind::collective),
                span(t, "send", 11, 5, est::Phase::communication, est::SpanKind::send)};
  host.lane = est::Lane::host;
  host.spans = {span(t, "optimizer step", 0, 9, est::Phase::optimizer, est::SpanKind::host)};
  t.tracks = {compute, comm, host};
  return t;
}

TEST(TensorCoreShares, MeasuredSpansCountByFlagOrClass) {
  const TensorCoreShares s = tensor_core_shares(measured());
  EXPECT_NEAR(s.step.kernel_s, 11e-3, 1e-12) << "3 + 1 + 4 + 2 + 1 ms; the send and the host span are not kernels";
  EXPECT_NEAR(s.step.tensor_core_s, 7e-3, 1e-12);
  EXPECT_NEAR(*s.step.share(), 7.0 / 11, 1e-12);
  EXPECT_NEAR(*s.by_phase.at(est::Phase::forward).share(), 0.75, 1e-12);
  EXPECT_NEAR(*s.by_phase.at(est::Phase::backward).share(), 4.0 / 6, 1e-12);
  EXPECT_EQ(*s.by_phase.at(est::Phase::communication).share(), 0);
  EXPECT_FALSE(s.by_phase.contains(est::Phase::optimizer)) << "host time is no kernel time";
  // The flagged kernel no rule names counts as a tensor-core GEMM, as estimator::span_class says.
  EXPECT_NEAR(s.by_kernel_class.at(est::KernelClass::tensor_core_gemm).kernel_s, 7e-3, 1e-12);
  EXPECT_EQ(*s.by_kernel_class.at(est::KernelClass::tensor_core_gemm).share(), 1);
  EXPECT_NEAR(s.by_kernel_class.at(est::KernelClass::compute).kernel_s, 3e-3, 1e-12);
  EXPECT_EQ(*s.by_kernel_class.at(est::KernelClass::compute).share(), 0);
  EXPECT_NEAR(s.by_kernel_class.at(est::KernelClass::communication).kernel_s, 1e-3, 1e-12);
}

TEST(TensorCoreShares, AnEmptyTimelineHasNoShare) {
  const TensorCoreShares s = tensor_core_shares(est::Timeline{});
  EXPECT_FALSE(s.step.share()) << "no kernel time: no share rather than 0%";
  EXPECT_TRUE(s.by_phase.empty());
}

// A predicted op per phase: forward 10 ms at a GEMM share of 0.6, backward 20 ms at 0.5, the
// optimizer 2 ms (element-wise), an all-reduce 1 ms.
est::Timeline predicted(bool with_weight_grad) {
  est::Timeline t;
  est::Track compute, comm;
  compute.spans = {span(t, "F0.0", 0, 10, est::Phase::forward), span(t, "B0.0", 10, 20, est::Phase::backward),
                   span(t, "optimizer", 40, 2, est::Phase::optimizer)};
  if (with_weight_grad) compute.spans.push_back(span(t, "W0.0", 30, 10, est::Phase::weight_grad));
  comm.lane = est::Lane::communication;
  comm.spans = {span(t, "DP all-reduce", 42, 1, est::Phase::communication, est::SpanKind::collective)};
  t.tracks = {compute, comm};
  return t;
}

TEST(TensorCoreShares, PredictedOpsCountTheirPhasesGemmShare) {
  PhaseGemmShares g;
  g.forward = 0.6;
  g.backward = 0.5;
  g.backward_input = 0.25;
  g.weight_grad = 1;
  const TensorCoreShares s = tensor_core_shares(predicted(false), &g);
  EXPECT_NEAR(s.step.kernel_s, 33e-3, 1e-12);
  EXPECT_NEAR(s.step.tensor_core_s, 6e-3 + 10e-3, 1e-12);
  EXPECT_NEAR(*s.by_phase.at(est::Phase::forward).share(), 0.6, 1e-12);
  EXPECT_NEAR(*s.by_phase.at(est::Phase::backward).share(), 0.5, 1e-12);
  EXPECT_EQ(*s.by_phase.at(est::Phase::optimizer).share(), 0);
  // Split as kernels would be: the GEMM part a tensor-core class, the rest other compute.
  EXPECT_NEAR(s.by_kernel_class.at(est::KernelClass::tensor_core_gemm).kernel_s, 16e-3, 1e-12);
  EXPECT_NEAR(s.by_kernel_class.at(est::KernelClass::compute).kernel_s, 4e-3 + 10e-3 + 2e-3, 1e-12);
  EXPECT_EQ(*s.by_kernel_class.at(est::KernelClass::compute).share(), 0);
  EXPECT_NEAR(s.by_kernel_class.at(est::KernelClass::communication).kernel_s, 1e-3, 1e-12);

  // Weight gradients on spans of their own: the backward spans are input gradients only.
  const TensorCoreShares z = tensor_core_shares(predicted(true), &g);
  EXPECT_NEAR(*z.by_phase.at(est::Phase::backward).share(), 0.25, 1e-12);
  EXPECT_NEAR(*z.by_phase.at(est::Phase::weight_grad).share(), 1, 1e-12);

  // The same timeline without shares reads as measured: op names match no GEMM rule.
  EXPECT_EQ(*tensor_core_shares(predicted(false)).step.share(), 0);
}

TEST(TensorCoreRows, PairBothSidesInPhaseAndClassOrder) {
  PhaseGemmShares g;
  g.forward = 0.6;
  g.backward = 0.5;
  const auto rows = tensor_core_rows(tensor_core_shares(predicted(false), &g), tensor_core_shares(measured()));
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.name);
  const std::vector<std::string> expected = {"step", "forward", "backward", "optimizer", "communication",
                                             "communication", "tensor_core_gemm", "compute"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(rows[0].group, TensorCoreRow::Group::step);
  EXPECT_EQ(rows[1].group, TensorCoreRow::Group::phase);
  EXPECT_EQ(rows[5].group, TensorCoreRow::Group::kernel_class);
  EXPECT_NEAR(*rows[0].predicted_figure, 16.0 / 33, 1e-12);
  EXPECT_NEAR(*rows[0].measured_figure, 7.0 / 11, 1e-12);
  EXPECT_NEAR(*rows[1].difference(), 0.6 - 0.75, 1e-12) << "predicted - measured, in share points";
  EXPECT_FALSE(rows[3].difference()) << "the optimizer ran no kernel in the measured step";
  // Kernel classes: their part of the step's kernel time.
  EXPECT_NEAR(*rows[6].predicted_figure, 16.0 / 33, 1e-12);
  EXPECT_NEAR(*rows[6].measured_figure, 7.0 / 11, 1e-12);
  EXPECT_NEAR(*rows[5].measured_figure, 1.0 / 11, 1e-12);
  EXPECT_NEAR(*rows[7].predicted_figure, 16.0 / 33, 1e-12) << "4 + 10 + 2 ms of other compute";
}

est::Plan gpt2_plan(est::Precision precision) {
  est::Plan plan = est::default_plan();
  plan.model = *est::find_model("gpt2-124m");
  plan.cluster.gpus = 1;
  plan.cluster.gpus_per_node = 1;
  plan.layout = {};
  plan.training.micro_batch = 4;
  plan.training.global_batch = 4;
  plan.training.seq_len = 1024;
  plan.training.precision = precision;
  return plan;
}

TEST(PredictedGemmShares, ComeFromTheOperatorModel) {
  auto bf16 = predicted_gemm_shares(gpt2_plan(est::Precision::bf16), nullptr);
  ASSERT_TRUE(bf16.ok()) << bf16.error_text();
  // Weight gradients are GEMMs only; forward and input gradients share time with element-wise
  // kernels; the backward with its weight gradients lies between the two.
  EXPECT_NEAR(bf16->weight_grad, 1, 1e-12);
  EXPECT_GT(bf16->forward, 0.2);
  EXPECT_LT(bf16->forward, 1);
  EXPECT_LT(bf16->backward_input, bf16->backward);
  EXPECT_LT(bf16->backward, bf16->weight_grad);
  // fp32 GEMMs run on CUDA cores: nothing on tensor cores.
  auto fp32 = predicted_gemm_shares(gpt2_plan(est::Precision::fp32), nullptr);
  ASSERT_TRUE(fp32.ok());
  EXPECT_EQ(fp32->forward, 0);
  EXPECT_EQ(fp32->backward, 0);
}

}  // namespace
}  // namespace plansight::core
