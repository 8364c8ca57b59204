// The probe's training step on the GPU, through the same rank, schedule and ZeRO code as the CPU:
// in fp32 with strict fp32 GEMMs (TF32 off), every layout's parameters after 3 steps and its
// losses equal the CPU run's of the same request within 1e-5 (the CPU is the reference; the
// tolerance is float rounding over three steps of order-dependent sums: cuBLASLt's blocking
// and the atomics of the embedding gradient). bf16 trains: the loss falls and stays finite, the
// weights and compute copies are where mixed precision puts them, and the result carries the
// CUPTI timeline with phases and the tensor-core share. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../integration/probe_test_util.h"
#include "device_test_util.h"
#include "plansight/probe/cuda/cuda_device.h"
#include "plansight/probe/trainer.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
using testing::compare;
using testing::comparison_options;
using testing::matrix_request;

struct GpuLayout {
  const char* name;
  int tp, pp, vpp, dp, zero;
  est::PipelineSchedule schedule;
  est::Recompute recompute;
};

class GpuEqualsCpu : public ::testing::TestWithParam<GpuLayout> {
 protected:
  void SetUp() override {
    PLANSIGHT_SKIP_WITHOUT_DEVICE();
    cuda::register_cuda_probe_device();
  }
};

TEST_P(GpuEqualsCpu, ParametersAndLossesAfterThreeStepsInFp32) {
  const GpuLayout& l = GetParam();
  ProbeRequest r = matrix_request();
  r.layout.tp = l.tp;
  r.layout.pp = l.pp;
  r.layout.vpp = l.vpp;
  r.layout.dp = l.dp;
  r.layout.zero_stage = l.zero;
  r.layout.schedule = l.schedule;
  r.layout.recompute = l.recompute;
  r.global_batch = 8;
  auto cpu = train(r, comparison_options());
  ASSERT_TRUE(cpu.ok()) << cpu.error_text();
  r.device = Device::cuda;
  r.precision = Precision::fp32;
  auto gpu = train(r, comparison_options());
  ASSERT_TRUE(gpu.ok()) << gpu.error_text();
  EXPECT_EQ(gpu->result.device.rfind("cuda: ", 0), 0u) << gpu->result.device;
  ASSERT_EQ(gpu->result.steps.size(), cpu->result.steps.size());
  for (std::size_t s = 0; s < cpu->result.steps.size(); ++s) {
    EXPECT_NEAR(gpu->result.steps[s].loss, cpu->result.steps[s].loss, 1e-5) << "step " << s + 1;
  }
  const auto d = compare(gpu->parameters, cpu->parameters);
  EXPECT_TRUE(d.same_tensors) << d.where;
  EXPECT_LE(d.max_abs, 1e-5) << "at " << d.where;
  // Weights, gradients and optimizer states are the same bytes on both devices.
  ASSERT_EQ(gpu->result.memory.size(), cpu->result.memory.size());
  for (std::size_t k = 0; k < cpu->result.memory.size(); ++k) {
    const auto& g = gpu->result.memory[k].peak;
    const auto& c = cpu->result.memory[k].peak;
    EXPECT_EQ(g.weights_bytes, c.weights_bytes) << "rank " << k;
    EXPECT_EQ(g.gradients_bytes, c.gradients_bytes) << "rank " << k;
    EXPECT_EQ(g.optimizer_bytes, c.optimizer_bytes) << "rank " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, GpuEqualsCpu,
    ::testing::Values(GpuLayout{"serial", 1, 1, 1, 1, 0, est::PipelineSchedule::one_f_one_b, est::Recompute::none},
                      GpuLayout{"tp2", 2, 1, 1, 1, 0, est::PipelineSchedule::one_f_one_b, est::Recompute::none},
                      GpuLayout{"pp2_1f1b", 1, 2, 1, 1, 0, est::PipelineSchedule::one_f_one_b, est::Recompute::none},
                      GpuLayout{"pp2_interleaved", 1, 2, 2, 1, 0, est::PipelineSchedule::interleaved, est::Recompute::none},
                      GpuLayout{"pp2_gpipe_full", 1, 2, 1, 1, 0, est::PipelineSchedule::gpipe, est::Recompute::full},
                      GpuLayout{"dp2_zero0", 1, 1, 1, 2, 0, est::PipelineSchedule::one_f_one_b, est::Recompute::none},
                      GpuLayout{"dp2_zero1", 1, 1, 1, 2, 1, est::PipelineSchedule::one_f_one_b, est::Recompute::none},
                      GpuLayout{"dp2_zero2", 1, 1, 1, 2, 2, est::PipelineSchedule::one_f_one_b, est::Recompute::selective},
                      GpuLayout{"dp2_zero3", 1, 1, 1, 2, 3, est::PipelineSchedule::one_f_one_b, est::Recompute::none},
                      GpuLayout{"tp2_pp2_dp2_zero1", 2, 2, 1, 2, 1, est::PipelineSchedule::one_f_one_b, est::Recompute::none}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(GpuTraining, Bf16TrainsWithATimelineAndTensorCoreShare) {
  PLANSIGHT_SKIP_WITHOUT_DEVICE();
#if !defined(PLANSIGHT_HAVE_CUPTI)
  // The timeline and the tensor-core share come from CUPTI (cuda_device.cpp).
  GTEST_SKIP() << "built without CUPTI (PLANSIGHT_ENABLE_CUPTI=OFF): no measured timeline or tensor-core share";
#endif
  cuda::register_cuda_probe_device();
  ProbeRequest r = matrix_request();
  r.model.hidden = 128;
  r.model.heads = 4;
  r.model.kv_heads = 4;
  r.model.ffn_hidden = 512;
  r.model.vocab = 256;
  r.model.max_seq_len = 64;
  r.seq_len = 64;
  r.micro_batch = 4;
  r.global_batch = 8;
  r.steps = 8;
  r.learning_rate = 3e-3;
  r.weight_decay = 0.0;
  r.trace = true;
  r.device = Device::cuda;
  r.precision = Precision::bf16;
  auto out = train(r, TrainOptions{});
  ASSERT_TRUE(out.ok()) << out.error_text();
  const auto& steps = out->result.steps;
  ASSERT_EQ(steps.size(), 8u);
  for (const auto& s : steps) EXPECT_TRUE(std::isfinite(s.loss)) << "step " << s.step;
  EXPECT_LT(steps.back().loss, steps.front().loss) << "the synthetic sequences are learnable";
  // Mixed precision: the compute weights are bf16 (2 bytes), the fp32 master copy and both
  // moments are optimizer state (12 bytes), the gradients fp32 (4 bytes) per parameter.
  const auto& m = out->result.memory.front().peak;
  EXPECT_NEAR(m.optimizer_bytes / m.weights_bytes, 6.0, 0.01);
  EXPECT_NEAR(m.gradients_bytes / m.weights_bytes, 2.0, 0.01);
  // The CUPTI timeline: kernels on the compute lane with forward and backward phases.
  const auto& t = out->result.timeline;
  bool forward = false, backward = false;
  for (const auto& track : t.tracks) {
    for (const auto& span : track.spans) {
      if (span.kind != est::SpanKind::kernel) continue;
      forward = forward || span.phase == est::Phase::forward;
      backward = backward || span.phase == est::Phase::backward;
    }
  }
  EXPECT_TRUE(forward && backward) << "kernels inherit their phase from the NVTX ranges";
  const auto& report = out->result.device_report;
  ASSERT_TRUE(report.contains("tensor_cores")) << report.dump();
  const double share = report["tensor_cores"]["step"]["share"].get<double>();
  EXPECT_GT(share, 0.0) << "bf16 GEMMs run on tensor cores";
  EXPECT_LT(share, 1.0) << "element-wise kernels do not";
  EXPECT_EQ(report["precision"], "bf16");
  // The GPU's own view of memory: the pool held at least the largest moment of the rank's
  // tensors (one rank here), and the rank's cuBLASLt workspace is named beside it.
  ASSERT_TRUE(report.contains("device_memory")) << report.dump();
  EXPECT_GE(report["device_memory"]["pool_peak_used_bytes"].get<double>(), out->result.memory.front().peak_total_bytes);
  EXPECT_GE(report["device_memory"]["pool_peak_reserved_bytes"].get<double>(),
            report["device_memory"]["pool_peak_used_bytes"].get<double>());
  EXPECT_EQ(report["device_memory"]["blas_workspace_bytes"].get<double>(), 32.0 * 1024 * 1024);
}

// fp16 trains with dynamic loss scaling: every step reports its scale (2^16 first, PyTorch
// GradScaler's init_scale), a step with inf/NaN gradients is skipped and halves the scale, the
// loss stays finite and falls, and on this small model fp16 follows the fp32 run closely (the
// loss is computed before scaling, so a skipped step still reports it).
TEST(GpuTraining, Fp16TrainsWithDynamicLossScaling) {
  PLANSIGHT_SKIP_WITHOUT_DEVICE();
  cuda::register_cuda_probe_device();
  ProbeRequest r = matrix_request();
  r.steps = 8;
  r.learning_rate = 3e-3;
  r.device = Device::cuda;
  r.layout.tp = 2;
  r.layout.dp = 2;
  r.layout.zero_stage = 1;
  r.global_batch = 4;
  r.precision = Precision::fp32;
  auto reference = train(r, TrainOptions{});
  ASSERT_TRUE(reference.ok()) << reference.error_text();
  r.precision = Precision::fp16;
  auto out = train(r, TrainOptions{});
  ASSERT_TRUE(out.ok()) << out.error_text();
  const auto& steps = out->result.steps;
  ASSERT_EQ(steps.size(), 8u);
  EXPECT_EQ(steps.front().loss_scale, 65536.0);
  int skipped = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_TRUE(std::isfinite(steps[i].loss)) << "step " << steps[i].step;
    skipped += steps[i].skipped;
    if (i > 0) {
      const double expected = steps[i - 1].skipped ? steps[i - 1].loss_scale / 2 : steps[i - 1].loss_scale;
      EXPECT_EQ(steps[i].loss_scale, expected) << "step " << steps[i].step;
    }
  }
  EXPECT_LT(skipped, 4) << "a few overflowing steps at most";
  EXPECT_LT(steps.back().loss, steps.front().loss);
  const auto& fp32 = reference->result.steps;
  EXPECT_NEAR(steps.front().loss, fp32.front().loss, 0.02 * fp32.front().loss) << "the same first forward, in fp16";
  EXPECT_EQ(out->result.device_report["precision"], "fp16");
}

}  // namespace
}  // namespace plansight::probe
