// Tensor-core share of a measured step from hand-made timelines: kernel time by flag, phase and
// kernel class, collectives counted as kernel time, host annotations and copies not, and the
// most expensive kernels by total time; then hand-made per-kernel counter readings set beside
// the name rules: the share by counters, the kernels where the two disagree, and the JSON.
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

// A traced step: a GEMM the rules know (600 + 1200 ns), an attention kernel they do not (1000 ns,
// it issues MMA instructions), a GeLU (200 ns) and an optimizer kernel the profiled step did not
// run (500 ns, a name the readings lack).
est::Timeline traced_step() {
  est::Timeline t;
  est::Track compute;
  compute.lane = est::Lane::compute;
  const char* gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
  compute.spans.push_back(span(t, gemm, 600, est::SpanKind::kernel, est::Phase::forward, true));
  compute.spans.push_back(span(t, gemm, 1200, est::SpanKind::kernel, est::Phase::backward, true));
  compute.spans.push_back(span(t, "flash_attention_forward", 1000, est::SpanKind::kernel, est::Phase::forward, false));
  compute.spans.push_back(span(t, "gelu_forward_kernel", 200, est::SpanKind::kernel, est::Phase::forward, false));
  compute.spans.push_back(span(t, "adamw_kernel", 500, est::SpanKind::kernel, est::Phase::optimizer, false));
  compute.spans.push_back(span(t, "memcpy DtoD", 5000, est::SpanKind::memcpy, est::Phase::forward, false));
  t.tracks = {compute};
  return t;
}

TEST(TensorCoreCounters, ShareByCountersWeighsTracedKernelTimes) {
  const est::Timeline t = traced_step();
  const std::string gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
  const std::vector<CounterReading> readings = {
      {gemm, 4096, 60.0},
      {"flash_attention_forward", 512, 30.0},
      {"gelu_forward_kernel", 0, 0.0},
      {gemm, 8192, 80.0},
      {"", 100, 10.0},  // a range without a name: left out
  };
  const CounterComparison c = compare_with_counters(t, readings);
  // Kernel time 600 + 1200 + 1000 + 200 + 500 = 3500 ns; counters see tensor-core instructions in
  // the GEMM and the attention kernel: 2800 ns. The copy is not kernel time.
  EXPECT_DOUBLE_EQ(c.step.seconds, 3500e-9);
  EXPECT_DOUBLE_EQ(c.step.tensor_core_seconds, 2800e-9);
  EXPECT_DOUBLE_EQ(c.step.share(), 0.8);
  EXPECT_DOUBLE_EQ(c.unprofiled_seconds, 500e-9) << "adamw_kernel has no counters";
  // Mean activity per kernel (GEMM (60+80)/2 = 70, attention 30, GeLU 0) weighted by traced time
  // over the profiled kernels: (1800*70 + 1000*30 + 200*0) / 3000 = 52.
  EXPECT_DOUBLE_EQ(c.tensor_active_pct, 52.0);

  ASSERT_EQ(c.kernels.size(), 4u);
  EXPECT_EQ(c.kernels[0].name, gemm) << "by traced time";
  EXPECT_EQ(c.kernels[0].profiled_launches, 2);
  EXPECT_EQ(c.kernels[0].tensor_core_launches, 2);
  EXPECT_DOUBLE_EQ(c.kernels[0].tensor_instructions, 12288);
  EXPECT_DOUBLE_EQ(c.kernels[0].mean_tensor_active_pct, 70.0);
  EXPECT_TRUE(c.kernels[0].counters_tensor_core);
  EXPECT_TRUE(c.kernels[0].rules_tensor_core);
  EXPECT_FALSE(c.kernels[0].disagrees());
  EXPECT_EQ(c.kernels[3].name, "gelu_forward_kernel");
  EXPECT_FALSE(c.kernels[3].counters_tensor_core);
  EXPECT_FALSE(c.kernels[3].disagrees());
  const auto adamw = std::find_if(c.kernels.begin(), c.kernels.end(), [](const CounterKernel& k) { return k.name == "adamw_kernel"; });
  ASSERT_NE(adamw, c.kernels.end());
  EXPECT_EQ(adamw->profiled_launches, 0);
  EXPECT_FALSE(adamw->disagrees()) << "no counters: no evidence against the rules";

  ASSERT_EQ(c.disagreements.size(), 1u);
  EXPECT_EQ(c.disagreements[0], "flash_attention_forward") << "MMA instructions in a kernel the rules call compute";
}

TEST(TensorCoreCounters, AKernelOnlyTheProfiledStepRanTakesTheRulesVerdictFromItsName) {
  const est::Timeline t = traced_step();
  // A cuBLASLt GEMM name the default rules call a tensor-core GEMM (sm80_xmma, not fp32 SIMT),
  // whose counters saw no MMA instruction: a disagreement, though the traced step did not run it.
  const std::string sm80_gemm = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize64x64x32";
  const CounterComparison c = compare_with_counters(t, {{sm80_gemm, 0, 0.0}});
  const auto k = std::find_if(c.kernels.begin(), c.kernels.end(), [&](const CounterKernel& x) { return x.name == sm80_gemm; });
  ASSERT_NE(k, c.kernels.end());
  EXPECT_EQ(k->seconds, 0.0);
  EXPECT_EQ(k->profiled_launches, 1);
  EXPECT_TRUE(k->rules_tensor_core) << "the default rules' sm80_xmma rule";
  EXPECT_FALSE(k->counters_tensor_core);
  EXPECT_TRUE(k->disagrees());
  ASSERT_EQ(c.disagreements.size(), 1u);
  EXPECT_EQ(c.disagreements[0], sm80_gemm);
  EXPECT_DOUBLE_EQ(c.step.tensor_core_seconds, 0.0) << "no traced kernel has counters showing tensor cores";
  EXPECT_DOUBLE_EQ(c.unprofiled_seconds, 3500e-9);
  EXPECT_DOUBLE_EQ(c.tensor_active_pct, 0.0) << "no traced time has counters";
}

TEST(TensorCoreCounters, JsonSaysWhetherCountersWereUsed) {
  est::Timeline t = traced_step();
  TensorCoreShare without = tensor_core_share(t);
  without.counters_note = "hardware counters not read: not asked for";
  const auto j0 = to_json(without);
  ASSERT_TRUE(j0.contains("counters"));
  EXPECT_FALSE(j0["counters"]["used"].get<bool>());
  EXPECT_EQ(j0["counters"]["note"], "hardware counters not read: not asked for");

  TensorCoreShare with = tensor_core_share(t);
  CounterComparison c = compare_with_counters(t, {{"flash_attention_forward", 512, 30.0}});
  c.chip = "GH100";
  c.profiled_step = 1;
  c.ranges = 1;
  c.passes = 1;
  with.counters = c;
  const auto j = to_json(with);
  const auto& counters = j["counters"];
  EXPECT_TRUE(counters["used"].get<bool>());
  EXPECT_EQ(counters["chip"], "GH100");
  EXPECT_EQ(counters["profiled_step"], 1);
  EXPECT_DOUBLE_EQ(counters["share"].get<double>(), 1000.0 / 3500.0);
  EXPECT_EQ(counters["kernels"].size(), 4u);
  ASSERT_EQ(counters["disagreements"].size(), 1u);
  EXPECT_EQ(counters["disagreements"][0]["name"], "flash_attention_forward");
  EXPECT_FALSE(counters["disagreements"][0]["rules_tensor_core"].get<bool>());
  EXPECT_TRUE(counters["disagreements"][0]["counters_tensor_core"].get<bool>());
  EXPECT_DOUBLE_EQ(j["step"]["share"].get<double>(), 1800.0 / 3500.0) << "the rules' figure stays beside it";
  EXPECT_DOUBLE_EQ(j["counter_share"].get<double>(), 1000.0 / 3500.0) << "the counters' figure, top level";
  EXPECT_FALSE(j0.contains("counter_share"));
}

}  // namespace
}  // namespace plansight::probe
