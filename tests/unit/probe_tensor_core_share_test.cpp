// Tensor-core share of a measured step from hand-made timelines: kernel time by flag, phase and
// kernel class, collectives counted as kernel time, host annotations and copies not, and the
// most expensive kernels by total time; then hand-made per-kernel counter readings of an untraced
// step: the counters' verdict (tensor pipe active, not instruction counts), the shares by counters
// and by names over the same durations, the kernels where the two disagree, and the JSON.
#include <gtest/gtest.h>

#include <algorithm>

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

// A profiled, untraced step's launches (name, MMA instructions, tensor pipe active %, seconds): a
// GEMM the rules know (600 + 1200 ns, two launches), an attention kernel they do not (1000 ns, its
// tensor pipe active), a GeLU whose instruction counters read non-zero with the pipe idle (200 ns:
// what an H200 showed for a bf16 GeLU), an optimizer kernel (500 ns) and a launch without a name
// (100 ns, pipe active).
const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

std::vector<CounterReading> profiled_step() {
  return {
      {kGemm, 4096, 60.0, 600e-9},
      {"flash_attention_forward", 512, 30.0, 1000e-9},
      {"gelu_forward_kernel", 2048, 0.0, 200e-9},
      {kGemm, 8192, 80.0, 1200e-9},
      {"adamw_kernel", 0, 0.0, 500e-9},
      {"", 100, 10.0, 100e-9},
  };
}

TEST(TensorCoreCounters, TheVerdictIsTheTensorPipesActivityNotItsInstructionCount) {
  EXPECT_FALSE(counters_tensor_core({"gelu_forward_kernel", 2048, 0.0, 1e-6}))
      << "H200: 2048 tensor instructions in a GeLU with the tensor pipe idle";
  EXPECT_TRUE(counters_tensor_core({kGemm, 24576, 15.458, 1e-6}));
  EXPECT_TRUE(counters_tensor_core({kGemm, 0, 0.001, 1e-6})) << "any active cycle: the threshold is 0";
  EXPECT_FALSE(counters_tensor_core({kGemm, 0, 0.0, 1e-6}));
}

TEST(TensorCoreCounters, TwoClassifiersWeighTheSameDurations) {
  const CounterComparison c = compare_with_counters(profiled_step());
  // Duration 600 + 1000 + 200 + 1200 + 500 + 100 = 3600 ns. Counters: the GEMM, the attention
  // kernel and the unnamed launch had their tensor pipe active: 2900 ns. Names: the GEMM: 1800 ns.
  EXPECT_DOUBLE_EQ(c.by_counters.seconds, 3600e-9);
  EXPECT_DOUBLE_EQ(c.by_counters.tensor_core_seconds, 2900e-9);
  EXPECT_DOUBLE_EQ(c.by_names.seconds, 3600e-9) << "the same launches, the same durations";
  EXPECT_DOUBLE_EQ(c.by_names.tensor_core_seconds, 1800e-9);
  EXPECT_DOUBLE_EQ(c.unnamed_seconds, 100e-9);
  // Activity weighted by duration: (600*60 + 1000*30 + 1200*80 + 100*10) / 3600 over every launch,
  // and over the launches with an active pipe / 2900.
  EXPECT_DOUBLE_EQ(c.tensor_active_pct, (600 * 60.0 + 1000 * 30.0 + 1200 * 80.0 + 100 * 10.0) / 3600);
  EXPECT_DOUBLE_EQ(c.tensor_core_active_pct, (600 * 60.0 + 1000 * 30.0 + 1200 * 80.0 + 100 * 10.0) / 2900);

  ASSERT_EQ(c.kernels.size(), 5u) << "four names and the launches without one";
  EXPECT_EQ(c.kernels[0].name, kGemm) << "by duration";
  EXPECT_EQ(c.kernels[0].profiled_launches, 2);
  EXPECT_EQ(c.kernels[0].tensor_core_launches, 2);
  EXPECT_DOUBLE_EQ(c.kernels[0].seconds, 1800e-9);
  EXPECT_DOUBLE_EQ(c.kernels[0].tensor_instructions, 12288);
  EXPECT_DOUBLE_EQ(c.kernels[0].mean_tensor_active_pct, 70.0);
  EXPECT_TRUE(c.kernels[0].counters_tensor_core);
  EXPECT_TRUE(c.kernels[0].rules_tensor_core);
  EXPECT_FALSE(c.kernels[0].disagrees());
  const auto find = [&](const std::string& name) {
    return *std::find_if(c.kernels.begin(), c.kernels.end(), [&](const CounterKernel& k) { return k.name == name; });
  };
  const CounterKernel gelu = find("gelu_forward_kernel");
  EXPECT_DOUBLE_EQ(gelu.tensor_instructions, 2048) << "kept as information";
  EXPECT_EQ(gelu.tensor_core_launches, 0);
  EXPECT_FALSE(gelu.counters_tensor_core) << "instructions without an active tensor pipe are no tensor-core use";
  EXPECT_FALSE(gelu.disagrees());
  const CounterKernel unnamed = find("");
  EXPECT_TRUE(unnamed.counters_tensor_core);
  EXPECT_FALSE(unnamed.rules_tensor_core) << "no name, no rule";
  EXPECT_FALSE(unnamed.disagrees()) << "the rules have no verdict to disagree with";

  ASSERT_EQ(c.disagreements.size(), 1u);
  EXPECT_EQ(c.disagreements[0], "flash_attention_forward") << "an active tensor pipe in a kernel the rules call compute";
}

TEST(TensorCoreCounters, ARuleGemmWhosePipeStayedIdleDisagrees) {
  // A cuBLASLt GEMM name the default rules call a tensor-core GEMM (sm80_xmma, not fp32 SIMT),
  // whose tensor pipe was idle although its instruction counters read non-zero.
  const std::string sm80_gemm = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize64x64x32";
  const CounterComparison c = compare_with_counters({{sm80_gemm, 4096, 0.0, 1e-6}});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_TRUE(c.kernels[0].rules_tensor_core) << "the default rules' sm80_xmma rule";
  EXPECT_FALSE(c.kernels[0].counters_tensor_core);
  EXPECT_TRUE(c.kernels[0].disagrees());
  ASSERT_EQ(c.disagreements.size(), 1u);
  EXPECT_EQ(c.disagreements[0], sm80_gemm);
  EXPECT_DOUBLE_EQ(c.by_counters.share(), 0.0);
  EXPECT_DOUBLE_EQ(c.by_names.share(), 1.0);
  EXPECT_DOUBLE_EQ(c.tensor_core_active_pct, 0.0) << "no launch with an active pipe";
}

TEST(TensorCoreCounters, NoReadingsNoShare) {
  const CounterComparison c = compare_with_counters({});
  EXPECT_TRUE(c.kernels.empty());
  EXPECT_EQ(c.by_counters.share(), 0.0);
  EXPECT_EQ(c.by_names.share(), 0.0);
  EXPECT_EQ(c.tensor_active_pct, 0.0);
}

TEST(TensorCoreCounters, AnUntracedStepsShareComesFromTheCounters) {
  CounterComparison c = compare_with_counters(profiled_step());
  c.chip = "GH100";
  c.profiled_step = 2;
  c.ranges = 6;
  c.passes = 2;
  c.names_note = "kernel names unknown for 1 launch";
  const TensorCoreShare s = tensor_core_share_from_counters(c);
  EXPECT_DOUBLE_EQ(s.step.seconds, 3600e-9) << "the counters' durations";
  EXPECT_DOUBLE_EQ(s.step.share(), 1800.0 / 3600.0) << "step: by the name rules";
  EXPECT_TRUE(s.by_phase.empty()) << "phases come from the tracer's NVTX ranges";
  EXPECT_DOUBLE_EQ(s.by_kernel_class.at("tensor_core_gemm").seconds, 1800e-9);
  EXPECT_DOUBLE_EQ(s.by_kernel_class.at("tensor_core_gemm").share(), 1.0);
  ASSERT_EQ(s.top_kernels.size(), 4u) << "named kernels";
  EXPECT_EQ(s.top_kernels[0].name, kGemm);
  EXPECT_EQ(s.top_kernels[0].launches, 2);
  EXPECT_TRUE(s.top_kernels[0].tensor_core);
  EXPECT_NE(s.source.find("hardware counters"), std::string::npos) << s.source;
  EXPECT_NE(s.source.find("step 2"), std::string::npos) << s.source;

  // What scripts/gpu_check_report.py's counters reader and the app read.
  const auto j = to_json(s);
  const auto& counters = j["counters"];
  EXPECT_TRUE(counters["used"].get<bool>());
  EXPECT_EQ(counters["chip"], "GH100");
  EXPECT_EQ(counters["profiled_step"], 2);
  EXPECT_EQ(counters["ranges"], 6);
  EXPECT_EQ(counters["dropped_ranges"], 0);
  EXPECT_EQ(counters["passes"], 2);
  EXPECT_DOUBLE_EQ(counters["share"].get<double>(), 2900.0 / 3600.0);
  EXPECT_DOUBLE_EQ(counters["names_share"].get<double>(), 1800.0 / 3600.0);
  EXPECT_DOUBLE_EQ(counters["seconds"].get<double>(), 3600e-9);
  EXPECT_DOUBLE_EQ(counters["unnamed_seconds"].get<double>(), 100e-9);
  EXPECT_TRUE(counters["tensor_active_pct"].is_number());
  EXPECT_TRUE(counters["tensor_core_active_pct"].is_number());
  EXPECT_EQ(counters["names_note"], "kernel names unknown for 1 launch");
  EXPECT_EQ(counters["kernels"].size(), 5u);
  ASSERT_EQ(counters["disagreements"].size(), 1u);
  EXPECT_EQ(counters["disagreements"][0]["name"], "flash_attention_forward");
  EXPECT_FALSE(counters["disagreements"][0]["rules_tensor_core"].get<bool>());
  EXPECT_TRUE(counters["disagreements"][0]["counters_tensor_core"].get<bool>());
  EXPECT_DOUBLE_EQ(counters["disagreements"][0]["tensor_active_pct"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(j["step"]["share"].get<double>(), 1800.0 / 3600.0) << "the rules' figure stays beside it";
  EXPECT_DOUBLE_EQ(j["counter_share"].get<double>(), 2900.0 / 3600.0) << "the counters' figure, top level";
  EXPECT_EQ(j["source"], s.source);
}

TEST(TensorCoreCounters, JsonSaysWhenCountersWereNotUsed) {
  est::Timeline t;
  TensorCoreShare without = tensor_core_share(t);
  without.counters_note = "hardware counters not read: not asked for";
  const auto j0 = to_json(without);
  ASSERT_TRUE(j0.contains("counters"));
  EXPECT_FALSE(j0["counters"]["used"].get<bool>());
  EXPECT_EQ(j0["counters"]["note"], "hardware counters not read: not asked for");
  EXPECT_FALSE(j0.contains("counter_share"));
}

}  // namespace
}  // namespace plansight::probe
