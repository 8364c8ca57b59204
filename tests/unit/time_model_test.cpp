// The time model's properties: communication and GEMM cost rules, calibration by a measured
// profile, schedules ordering the bubble, DP overlap, the closed form agreeing with the
// simulation, and the breakdown adding up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/device_model.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/schedule_metrics.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/json_io.h"
#include "zero3_test_plan.h"

namespace plansight::estimator {
namespace {

TEST(CommModel, NcclTestsBusFactorsAndRingTime) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::send_recv, 2), 1.0);
  Link link{100e9, 5e-6, false};
  // Ring all-reduce of 1 GB on 8 GPUs: 14 steps of latency + 2*7/8 GB at 100 GB/s.
  EXPECT_DOUBLE_EQ(collective_seconds(Collective::all_reduce, 1e9, 8, link), 14 * 5e-6 + 1.75e9 / 100e9);
  EXPECT_EQ(collective_seconds(Collective::all_reduce, 1e9, 1, link), 0) << "a group of one moves nothing";
  link.crosses_nodes = true;  // tree latency bound across nodes: 2 log2(n) steps
  EXPECT_DOUBLE_EQ(collective_seconds(Collective::all_reduce, 1e9, 64, link), 12 * 5e-6 + 2 * 63.0 / 64 * 1e9 / 100e9);
}

TEST(CommModel, PlacementDecidesTheLink) {
  Plan p = default_plan();  // 8 GPUs per node, TP 8, PP 8, DP 16
  const auto eff = default_efficiency(p.cluster.gpu);
  const auto tp = group_link(p.cluster, p.layout, 16, Group::tp, eff.nvlink_fraction, eff.network_fraction);
  const auto dp = group_link(p.cluster, p.layout, 16, Group::dp, eff.nvlink_fraction, eff.network_fraction);
  EXPECT_FALSE(tp.crosses_nodes);
  EXPECT_TRUE(dp.crosses_nodes);
  EXPECT_NEAR(tp.bandwidth_bytes_per_s, 230e9, 1e6) << "nccl-tests all-reduce bus bandwidth in a DGX A100";
  EXPECT_NEAR(dp.bandwidth_bytes_per_s, 25e9 * 0.9, 1e6) << "one GPU of the group per node: its own NIC";
  p.layout.tp = 1;  // DP stride 1: eight members per node share all eight NICs
  const auto wide = group_link(p.cluster, p.layout, 128, Group::dp, eff.nvlink_fraction, eff.network_fraction);
  EXPECT_NEAR(wide.bandwidth_bytes_per_s, 8 * 25e9 * 0.9, 1e6);
  p.layout.tp = 16;  // TP across two nodes
  EXPECT_TRUE(group_link(p.cluster, p.layout, 8, Group::tp, eff.nvlink_fraction, eff.network_fraction).crosses_nodes);
}

TEST(DeviceModel, GemmEfficiencyApproachesTheMeasuredMaximum) {
  const GpuSpec a100 = *find_gpu("a100-80gb-sxm");
  DeviceEfficiency eff = default_efficiency(a100);
  eff.in_step_slowdown = 1;
  eff.kernel_overhead_s = 0;
  const DeviceModel dev(a100, Precision::bf16, eff);
  auto tflops = [&](double m, double n, double k) { return 2 * m * n * k / dev.gemm_seconds(m, n, k) / 1e12; };
  EXPECT_NEAR(tflops(8192 * 4, 8192, 8192), 312 * 0.85, 312 * 0.03) << "large GEMMs near MAMF";
  EXPECT_LT(tflops(1024, 1024, 1024), 0.6 * 312) << "1024^3 runs far below peak (one wave, few tiles)";
  EXPECT_LT(tflops(2048, 2048, 2048), tflops(8192, 8192, 8192));
  // Wave quantization: 6912 x 512 is exactly 108 tiles of 256 x 128, one wave on 108 SMs; one
  // more row needs a second wave (or smaller, slower tiles).
  EXPECT_GT(dev.gemm_seconds(6913, 512, 4096), 1.3 * dev.gemm_seconds(6912, 512, 4096));
  // ... while 8192 -> 8193 rows (1024 -> 1056 tiles) stays within the same 10 waves.
  EXPECT_NEAR(dev.gemm_seconds(8193, 4096, 4096), dev.gemm_seconds(8192, 4096, 4096), 1e-12);
  // Alignment: 50257 columns miss Tensor Cores' 16-byte rule; 50304 does not.
  EXPECT_GT(dev.gemm_seconds(4096, 50257, 4096), 1.5 * dev.gemm_seconds(4096, 50304, 4096));
  // Memory-bound: a copy of 1 GB at 85% of 2039 GB/s.
  EXPECT_NEAR(dev.memory_seconds(1e9), 1e9 / (2039e9 * 0.85), 1e-9);
}

TEST(DeviceModel, MeasuredProfileRescalesTheModel) {
  const GpuSpec a100 = *find_gpu("a100-80gb-sxm");
  const DeviceModel plain(a100, Precision::bf16, default_efficiency(a100));
  HardwareProfile profile;
  GemmSample s;
  s.m = 4096;
  s.n = 4096;
  s.k = 4096;
  s.precision = Precision::bf16;
  s.seconds = 2 * plain.gemm_seconds(4096, 4096, 4096);  // this machine is twice as slow
  profile.gemms.push_back(s);
  profile.memory_bandwidth_bytes_per_s = 1000e9;
  const DeviceModel measured(a100, Precision::bf16, default_efficiency(a100), &profile);
  EXPECT_NEAR(measured.gemm_seconds(4096, 4096, 4096), s.seconds, 1e-12);
  EXPECT_NEAR(measured.gemm_seconds(4096, 8192, 4096) / plain.gemm_seconds(4096, 8192, 4096), 2.0, 1e-9);
  EXPECT_GT(measured.memory_seconds(1e9), plain.memory_seconds(1e9) * 1.5);
  auto json = to_json(profile);
  auto back = hardware_profile_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(*back), json);
  json["gemms"][0]["m"] = "big";
  EXPECT_FALSE(hardware_profile_from_json(json).ok());
}

TEST(DeviceModel, MeasuredElementwiseRateReplacesTheCopyBandwidth) {
  const GpuSpec a100 = *find_gpu("a100-80gb-sxm");
  const DeviceModel plain(a100, Precision::bf16, default_efficiency(a100));
  HardwareProfile profile;
  profile.kernel_overhead_s = 1e-6;
  profile.elementwise_bytes_per_s["activation_forward"] = 2e9;
  const DeviceModel measured(a100, Precision::bf16, default_efficiency(a100), &profile);
  // The measured kind: overhead + bytes / rate, no in-step slowdown on a measured figure.
  EXPECT_NEAR(measured.elementwise_seconds(ElementwiseKind::activation_forward, 1e9), 1e-6 + 0.5, 1e-12);
  EXPECT_EQ(measured.elementwise_seconds(ElementwiseKind::activation_forward, 0), 0);
  // Other kinds, and a model without a profile: exactly the memory-bound time.
  EXPECT_EQ(measured.elementwise_seconds(ElementwiseKind::activation_backward, 1e9), measured.memory_seconds(1e9));
  EXPECT_EQ(plain.elementwise_seconds(ElementwiseKind::activation_forward, 1e9), plain.memory_seconds(1e9));
  EXPECT_EQ(elementwise_kind_name(ElementwiseKind::cross_entropy_backward), "cross_entropy_backward");
}

TEST(DeviceModel, MeasuredFusedAttentionAndOptimizerReplaceTheModelledCosts) {
  GpuSpec cpu;
  cpu.name = "cpu";
  cpu.peak_fp32_flops = 1e11;
  cpu.hbm_bandwidth_bytes_per_s = 4e10;
  HardwareProfile profile;
  profile.attention.push_back(AttentionSample{4, 128, 32, 3e-4, 5e-4});
  profile.optimizer_bytes_per_s = 6e9;
  const DeviceModel measured(cpu, Precision::fp32, default_efficiency(cpu), &profile);
  const DeviceModel plain(cpu, Precision::fp32, default_efficiency(cpu));
  ASSERT_TRUE(measured.has_fused_attention());
  EXPECT_FALSE(plain.has_fused_attention());
  // At the sample's shape its own seconds; twice the heads or twice the sequence: 2x and 4x.
  EXPECT_DOUBLE_EQ(measured.fused_attention_seconds(4, 128, 32, false), 3e-4);
  EXPECT_DOUBLE_EQ(measured.fused_attention_seconds(8, 128, 32, true), 1e-3);
  EXPECT_DOUBLE_EQ(measured.fused_attention_seconds(4, 256, 32, false), 1.2e-3);
  // The optimizer at the measured rate (+ overhead); without a rate, a streaming kernel.
  EXPECT_NEAR(measured.optimizer_seconds(6e9), 1.0 + default_efficiency(cpu).kernel_overhead_s, 1e-12);
  EXPECT_EQ(plain.optimizer_seconds(6e9), plain.memory_seconds(6e9));
}

TEST(HardwareProfileJson, AttentionAndOptimizerRoundTripAndAreChecked) {
  HardwareProfile profile;
  profile.device = "cpu: test";
  profile.attention.push_back(AttentionSample{4, 128, 32, 3e-4, 5e-4});
  profile.optimizer_bytes_per_s = 6e9;
  const auto json = to_json(profile);
  auto back = hardware_profile_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  ASSERT_EQ(back->attention.size(), 1u);
  EXPECT_EQ(back->attention[0].seq, 128);
  EXPECT_EQ(back->attention[0].backward_s, 5e-4);
  EXPECT_EQ(back->optimizer_bytes_per_s, 6e9);
  EXPECT_EQ(to_json(*back), json);
  auto bad = json;
  bad["attention"][0]["seq"] = 0;
  auto error = hardware_profile_from_json(bad);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error_text().find("attention[0].seq"), std::string::npos) << error.error_text();
}

TEST(HardwareProfileJson, ElementwiseRatesRoundTripAndOldProfilesStayReadable) {
  HardwareProfile profile;
  profile.device = "cpu: test";
  profile.elementwise_bytes_per_s = {{"norm_forward", 3e9}, {"activation_backward", 1.5e9}};
  auto json = to_json(profile);
  auto back = hardware_profile_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(back->elementwise_bytes_per_s, profile.elementwise_bytes_per_s);
  EXPECT_EQ(to_json(*back), json);
  auto old = json;
  old.erase("elementwise_bytes_per_s");  // written before element-wise calibration
  auto old_back = hardware_profile_from_json(old);
  ASSERT_TRUE(old_back.ok()) << old_back.error_text();
  EXPECT_TRUE(old_back->elementwise_bytes_per_s.empty());
  auto bad = json;
  bad["elementwise_bytes_per_s"]["norm_forward"] = "fast";
  auto error = hardware_profile_from_json(bad);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error_text().find("elementwise_bytes_per_s.norm_forward"), std::string::npos) << error.error_text();
  bad["elementwise_bytes_per_s"] = 5;
  error = hardware_profile_from_json(bad);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error_text().find("elementwise_bytes_per_s"), std::string::npos) << error.error_text();
}

// A plan whose stages are uniform: tiny vocabulary, so embedding and head cost nothing.
Plan uniform_plan(std::int64_t pp, std::int64_t micro_batches, PipelineSchedule schedule, std::int64_t vpp = 1) {
  Plan p = default_plan();
  p.model.vocab = 128;
  p.model.layers = 48;
  p.cluster.gpus = 8 * pp;
  p.layout = LayoutSpec{};
  p.layout.tp = 8;
  p.layout.pp = pp;
  p.layout.vpp = vpp;
  p.layout.schedule = schedule;
  p.layout.recompute = Recompute::selective;
  p.layout.sequence_parallel = true;
  p.training.global_batch = micro_batches;
  return p;
}

// Chunks that cost the same share one ChunkCost (IterationCosts::chunk_of): the default plan's
// first chunk holds the embedding, its last the LM head, the others cost alike; each chunk's
// shared cost is the one of its own phases; uneven layers give their chunks costs of their own.
TEST(TimeModel, SharedProcessorsAreBoundedByTheTimelinesLimit) {
  // 64 stages x 4 chunks x 1,024 micro-batches on 8 shared processors: 524,288 ops, which the
  // time-ordered shared model would take seconds over; the estimate says why and what fits.
  Plan plan = default_plan();
  plan.model.layers = 256;
  plan.layout.pp = 64;
  plan.layout.vpp = 4;
  plan.layout.tp = 1;
  plan.layout.schedule = PipelineSchedule::interleaved;
  plan.cluster.gpus = 64;
  plan.training.micro_batch = 1;
  plan.training.global_batch = 1024;
  plan.cluster.shared_processors = 8;
  ASSERT_EQ(schedule_ops(plan), 524'288);
  const auto e = estimate(plan);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.errors().front().field, "cluster.shared_processors") << e.error_text();
  EXPECT_NE(e.error_text().find("1024 micro-batches x 512 ops = 524288"), std::string::npos) << e.error_text();
  EXPECT_NE(e.error_text().find("at most 256 micro-batches"), std::string::npos) << e.error_text() << " (312 fit, 256 divide by pp)";
  plan.cluster.shared_processors = 0;  // a device for every rank: simulated, skipping its steady state
  EXPECT_TRUE(estimate(plan).ok());
}

TEST(TimeModel, AlikeChunksShareOneCost) {
  Plan plan = default_plan();
  plan.layout.schedule = PipelineSchedule::interleaved;
  plan.layout.vpp = 2;
  const auto eff = default_efficiency(plan.cluster.gpu);
  const DeviceModel dev(plan.cluster.gpu, plan.training.precision, eff);
  const auto e = estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  const IterationCosts c = iteration_costs(plan, dev, plan_links(plan, eff), e->padded_vocab);
  const auto chunks = static_cast<std::size_t>(plan.layout.pp * plan.layout.vpp);
  ASSERT_EQ(c.chunk_of.size(), chunks);
  EXPECT_EQ(c.chunks.size(), 3u);
  EXPECT_EQ(c.chunk_of.front(), 0);
  EXPECT_EQ(c.chunk_of.back(), 2);
  for (std::size_t g = 0; g < chunks; ++g) {
    SCOPED_TRACE("chunk " + std::to_string(g));
    ASSERT_GE(c.chunk_of[g], 0);
    ASSERT_LT(static_cast<std::size_t>(c.chunk_of[g]), c.chunks.size());
    if (g > 0 && g + 1 < chunks) {
      EXPECT_EQ(c.chunk_of[g], 1);
    }
    const ChunkCost& cost = c.chunks[static_cast<std::size_t>(c.chunk_of[g])];
    EXPECT_DOUBLE_EQ(cost.forward.seconds(), c.chunk_forward[g].total_s());
    EXPECT_DOUBLE_EQ(cost.backward.seconds(), c.chunk_backward_input[g].total_s());
    EXPECT_DOUBLE_EQ(cost.weight_grad.seconds(), c.chunk_backward_weight[g].total_s());
    EXPECT_DOUBLE_EQ(cost.dp_reduce_seconds, c.chunk_dp_seconds[g]);
  }
  // Stages of 4 and 3 layers in turn (the first takes the rest): neighbours never share a cost.
  Plan uneven = plan;
  uneven.layout.schedule = PipelineSchedule::one_f_one_b;
  uneven.layout.vpp = 1;
  uneven.layout.stage_layers.assign(static_cast<std::size_t>(uneven.layout.pp), 0);
  std::int64_t left = uneven.model.layers;
  for (std::size_t s = 1; s < uneven.layout.stage_layers.size(); ++s) {
    uneven.layout.stage_layers[s] = s % 2 == 0 ? 3 : 4;
    left -= uneven.layout.stage_layers[s];
  }
  uneven.layout.stage_layers[0] = left;
  ASSERT_TRUE(estimate(uneven).ok());
  const IterationCosts u = iteration_costs(uneven, dev, plan_links(uneven, eff), e->padded_vocab);
  for (std::size_t g = 1; g + 1 < u.chunk_of.size(); ++g) {
    EXPECT_NE(u.chunk_of[g], u.chunk_of[g + 1]) << "chunks of 3 and 4 layers share a cost at " << g;
    EXPECT_DOUBLE_EQ(u.chunks[static_cast<std::size_t>(u.chunk_of[g])].forward.seconds(), u.chunk_forward[g].total_s());
  }
}

TEST(TimeModel, OneFOneBBubbleIsTheTextbookFraction) {
  for (std::int64_t m : {8, 16, 32}) {
    auto e = estimate(uniform_plan(4, m, PipelineSchedule::one_f_one_b));
    ASSERT_TRUE(e.ok()) << e.error_text();
    EXPECT_NEAR(e->time.bubble_fraction, 3.0 / static_cast<double>(m), 0.02) << m;
  }
}

TEST(TimeModel, InterleavingThenZeroBubbleShrinkTheBubble) {
  auto plain = estimate(uniform_plan(4, 8, PipelineSchedule::one_f_one_b));
  auto interleaved = estimate(uniform_plan(4, 8, PipelineSchedule::interleaved, 2));
  auto zb = estimate(uniform_plan(4, 8, PipelineSchedule::zb_h1));
  ASSERT_TRUE(plain.ok() && interleaved.ok() && zb.ok()) << interleaved.error_text() << zb.error_text();
  EXPECT_LT(interleaved->time.breakdown.bubble_s, 0.7 * plain->time.breakdown.bubble_s);
  EXPECT_LT(zb->time.breakdown.bubble_s, plain->time.breakdown.bubble_s);
  EXPECT_LT(zb->time.iteration_s, plain->time.iteration_s);
  auto gpipe = estimate(uniform_plan(4, 8, PipelineSchedule::gpipe));
  EXPECT_NEAR(gpipe->time.bubble_fraction, plain->time.bubble_fraction, 0.02) << "same bubble, more memory";
}

TEST(TimeModel, OverlappedDataParallelReductionIsLessExposed) {
  Plan p = default_plan();
  p.model = *find_model("llama-2-7b");
  p.layout = LayoutSpec{};
  p.cluster.gpus = 64;
  p.training.global_batch = 64;
  p.training.precision = Precision::bf16;
  auto overlapped = estimate(p);
  p.layout.dp_overlap = false;
  auto at_end = estimate(p);
  ASSERT_TRUE(overlapped.ok() && at_end.ok());
  EXPECT_LT(overlapped->time.breakdown.dp_comm_s, 0.5 * at_end->time.breakdown.dp_comm_s);
  EXPECT_LT(overlapped->time.iteration_s, at_end->time.iteration_s);
}

TEST(TimeModel, EstimateWithPredictionSimulatesOnceAndKeepsTheTimeline) {
  // The views that show the predicted timeline beside the estimate take both from one call: the
  // prediction is the estimate's own simulation (the same iteration and breakdown, bit for bit)
  // with its timeline; with a throughput given, the estimate's time is that throughput's and the
  // prediction is still the time model's.
  const Plan plan = default_plan();
  TimePrediction prediction;
  const auto e = estimate_with_prediction(plan, nullptr, prediction);
  ASSERT_TRUE(e.ok()) << e.error_text();
  ASSERT_TRUE(e->time.predicted);
  EXPECT_EQ(prediction.iteration_s, e->time.iteration_s);
  EXPECT_EQ(prediction.breakdown.bubble_s, e->time.breakdown.bubble_s);
  EXPECT_FALSE(prediction.timeline.tracks.empty());
  EXPECT_EQ(prediction.timeline.end_ns() - prediction.timeline.begin_ns(),
            static_cast<std::int64_t>(std::llround(e->time.iteration_s * 1e9)));

  Plan given = plan;
  given.training.achieved_tflops = 150;
  TimePrediction model;
  const auto g = estimate_with_prediction(given, nullptr, model);
  ASSERT_TRUE(g.ok()) << g.error_text();
  EXPECT_FALSE(g->time.predicted);
  EXPECT_EQ(model.iteration_s, e->time.iteration_s) << "the time model's, not the given throughput's";
  EXPECT_FALSE(model.timeline.tracks.empty());

  Plan bad = plan;
  bad.layout.tp = 3;  // GPT-3 175B's 96 heads do not divide by it: an error
  TimePrediction untouched;
  untouched.iteration_s = -1;
  const auto b = estimate_with_prediction(bad, nullptr, untouched);
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(untouched.iteration_s, -1) << "written only on success";
}

TEST(TimeModel, BreakdownAddsUpAndClosedFormAgrees) {
  std::vector<Plan> plans = {default_plan(), uniform_plan(4, 16, PipelineSchedule::one_f_one_b),
                             uniform_plan(4, 16, PipelineSchedule::interleaved, 3), uniform_plan(8, 32, PipelineSchedule::zb_h1)};
  Plan llama = default_plan();
  llama.model = *find_model("llama-3.1-8b");
  llama.layout = LayoutSpec{};
  llama.layout.tp = 2;
  llama.layout.zero_stage = 1;
  llama.cluster.gpus = 16;
  llama.training.global_batch = 64;
  llama.training.attention = AttentionKernel::flash;
  plans.push_back(llama);
  for (const auto& plan : plans) {
    auto e = estimate(plan);
    ASSERT_TRUE(e.ok()) << e.error_text();
    EXPECT_NEAR(e->time.breakdown.total_s(), e->time.iteration_s, 1e-6 * e->time.iteration_s);
    const auto eff = default_efficiency(plan.cluster.gpu);
    const DeviceModel dev(plan.cluster.gpu, plan.training.precision, eff);
    const auto costs = iteration_costs(plan, dev, plan_links(plan, eff), e->padded_vocab);
    const auto closed = closed_form_time(plan, costs);
    EXPECT_NEAR(closed.iteration_s / e->time.iteration_s, 1.0, 0.05) << plan.model.name << " pp " << plan.layout.pp;
  }
}

// The bubble has one definition (schedule_metrics.h) and every figure is that one: the estimate's
// mean and worst fractions are schedule_bubbles() of the predicted timeline, to the bit; the
// breakdown's bubble + exposed PP time is the first stage's bubble (the default plan's first
// stage waits for no later rank at the end); the closed form's fractions follow the simulated
// ones. Before, the default plan showed 8.7% (estimate), 8.4% (timeline) and 7.9% (breakdown).
TEST(TimeModel, EveryBubbleFigureIsTheScheduleBubble) {
  Plan interleaved = default_plan();
  interleaved.layout.schedule = PipelineSchedule::interleaved;
  interleaved.layout.vpp = 3;
  interleaved.layout.zero_stage = 1;
  Plan zero3 = default_plan();
  zero3.layout.zero_stage = 3;
  for (const Plan& plan : {default_plan(), interleaved, zero3, uniform_plan(4, 16, PipelineSchedule::zb_h1)}) {
    SCOPED_TRACE(std::string(to_string(plan.layout.schedule)) + " pp " + std::to_string(plan.layout.pp));
    TimePrediction predicted;
    EstimateOptions options;
    options.prediction = &predicted;
    auto e = estimate(plan, options);
    ASSERT_TRUE(e.ok()) << e.error_text();
    const ScheduleBubbles b = schedule_bubbles(predicted.timeline);
    EXPECT_DOUBLE_EQ(e->time.bubble_fraction, b.mean_fraction);
    EXPECT_DOUBLE_EQ(e->time.bubble_fraction_max, b.max_fraction);
    auto lean = estimate(plan);  // no timeline kept: the simulator's own record of the bubble
    ASSERT_TRUE(lean.ok()) << lean.error_text();
    EXPECT_DOUBLE_EQ(lean->time.bubble_fraction, b.mean_fraction);
    EXPECT_DOUBLE_EQ(lean->time.breakdown.bubble_s, e->time.breakdown.bubble_s);
    EXPECT_GT(b.max_fraction, b.mean_fraction) << "the stages differ (embedding, head)";
    const auto drawn = bubble_intervals(predicted.timeline);  // what the Timeline page shades
    ASSERT_EQ(drawn.size(), b.ranks.size());
    for (std::size_t i = 0; i < drawn.size(); ++i) EXPECT_EQ(total_length(drawn[i].intervals), b.bubble_ns[i]) << i;
    const auto& t = e->time.breakdown;
    EXPECT_NEAR(t.bubble_s + t.pp_comm_s, static_cast<double>(b.bubble_ns[0]) * 1e-9, 1e-6);
    const auto closed = predict_time_closed_form(plan, e->padded_vocab, nullptr);
    EXPECT_NEAR(closed.bubble_fraction, b.mean_fraction, 0.15 * b.mean_fraction);
    EXPECT_NEAR(closed.bubble_fraction_max, b.max_fraction, 0.15 * b.max_fraction);
  }
}

TEST(TimeModel, AnEstimateOverItsSimulationBoundTakesTheClosedFormAndSaysSo) {
  const Plan plan = default_plan();  // pp 8 x 96 micro-batches x (F, B) = 1,536 ops
  EXPECT_EQ(schedule_ops(plan), 1536);
  const auto simulated = estimate(plan);
  ASSERT_TRUE(simulated.ok());
  EXPECT_TRUE(simulated->time.simulated);
  EstimateOptions bounded;
  bounded.max_simulated_ops = 1535;
  const auto closed = estimate(plan, bounded);
  ASSERT_TRUE(closed.ok());
  EXPECT_FALSE(closed->time.simulated);
  EXPECT_TRUE(closed->time.predicted);
  // The closed form's own figures, as the search ranks them.
  EXPECT_DOUBLE_EQ(closed->time.iteration_s, predict_time_closed_form(plan, closed->padded_vocab, nullptr).iteration_s);
  EXPECT_NEAR(closed->time.iteration_s, simulated->time.iteration_s, 0.02 * simulated->time.iteration_s)
      << "uniform 1F1B: the closed form is the simulation's (m + p - 1)(F + B) up to transfers";
  bool warned = false;
  for (const auto& w : closed->warnings) warned |= w.field == "time" && w.message.find("1536 ops") != std::string::npos;
  EXPECT_TRUE(warned) << "the estimate says its time was not simulated, and why";
  bounded.max_simulated_ops = 1536;
  EXPECT_TRUE(estimate(plan, bounded)->time.simulated) << "the bound is inclusive";
}

TEST(TimeModel, TimelinesLongerThanTheBoundAreRefusedByName) {
  Plan plan = default_plan();
  EXPECT_TRUE(timeline_size_errors(plan).empty());
  plan.training.global_batch = 16 * 10'001;  // dp 16: 10,001 micro-batches x pp 8 x 2 = 160,016 ops
  const auto errors = timeline_size_errors(plan);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "training.global_batch");
  EXPECT_NE(errors[0].message.find("160016 ops"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].message.find("at most 10000 micro-batches"), std::string::npos) << errors[0].message;
  plan.training.global_batch = 16 * 10'000;
  EXPECT_TRUE(timeline_size_errors(plan).empty()) << "160,000 ops is the limit itself";
}

TEST(TimeModel, PipelineSendsAndZeroParameterGatherAreNamedSpans) {
  Plan plan = default_plan();  // TP 8 in a node, PP 8 across nodes, DP 16
  plan.layout.zero_stage = 1;
  auto e = estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  auto t = predict_time(plan, e->padded_vocab);
  ASSERT_TRUE(t.ok());
  // Each stage of the default layout sits in its own nodes: sends cross nodes.
  const std::string send = "send F0.0 · pp 8 · across nodes";
  const std::string gather = "ZeRO-1 parameter all-gather · dp x cp 16 · across nodes";
  bool saw_send = false;
  std::int64_t gather_ns = 0, optimizer_end_ns = -1, gather_start_ns = -1;
  for (const auto& track : t->timeline.tracks) {
    if (track.rank != 0) continue;
    for (const auto& s : track.spans) {
      const std::string& name = t->timeline.name_of(s);
      saw_send |= s.kind == SpanKind::send && name == send;
      if (s.phase == Phase::optimizer) optimizer_end_ns = s.end_ns();
      if (name == gather) gather_ns = s.duration_ns, gather_start_ns = s.start_ns;
    }
  }
  EXPECT_TRUE(saw_send) << "the first activation send is named with its group and link";
  ASSERT_GT(gather_ns, 0) << "ZeRO-1's gather of the updated parameters is a span of its own";
  EXPECT_EQ(gather_start_ns, optimizer_end_ns) << "it follows the step";
  // The breakdown counts it as data-parallel communication; the iteration still ends with it.
  EXPECT_NEAR(static_cast<double>(t->timeline.end_ns()) * 1e-9, t->iteration_s, 1e-9);
  EXPECT_GE(t->breakdown.dp_comm_s, static_cast<double>(gather_ns) * 1e-9 - 1e-9);
}

// Per collective name on rank `rank`'s tracks: total duration and bytes; and whether every span
// of the overlapped track (stream 2) lies inside one of the rank's compute spans.
struct NamedComm {
  std::map<std::string, std::pair<std::int64_t, double>> by_name;
  std::size_t hidden_spans = 0;
  bool hidden_inside_compute = true;
};
NamedComm named_comm(const Timeline& t, std::int32_t rank) {
  NamedComm out;
  const Track* compute = nullptr;
  for (const Track& track : t.tracks) {
    if (track.rank == rank && track.lane == Lane::compute) compute = &track;
  }
  for (const Track& track : t.tracks) {
    if (track.rank != rank || track.lane != Lane::communication) continue;
    for (const Span& s : track.spans) {
      auto& [ns, bytes] = out.by_name[t.name_of(s)];
      ns += s.duration_ns;
      bytes += s.bytes;
      if (track.stream != 2) continue;
      ++out.hidden_spans;
      const bool inside = std::any_of(compute->spans.begin(), compute->spans.end(), [&](const Span& c) {
        return c.start_ns <= s.start_ns && s.end_ns() <= c.end_ns();
      });
      out.hidden_inside_compute = out.hidden_inside_compute && inside;
    }
  }
  return out;
}

// ZeRO-3 prefetches each layer's parameters while the layer before computes, and reduce-scatters
// gradients under the backward (Rajbhandari et al. 2020, Sec. 7.2.2; PyTorch FSDP runs them on
// a stream of its own): what compute hides costs nothing but still moves its bytes. The
// timeline shows it beside the compute, with its bytes; what is not hidden stays on the lane.
TEST(TimeModel, ZeroThreeShowsTheGathersComputeHides) {
  const Plan plan = zero3_7p5b_on_64(1, Recompute::full, 1);
  auto e = estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  auto hidden = predict_time(plan, e->padded_vocab);
  Plan waiting = plan;
  waiting.training.zero3_prefetch = false;
  auto exposed = predict_time(waiting, e->padded_vocab);
  ASSERT_TRUE(hidden.ok() && exposed.ok());
  // 64 GPUs over 8 DGX nodes: the gathers reach 200 GB/s per GPU (eight NICs' rings) and hide
  // behind the layers' compute; without prefetch every one waits.
  EXPECT_LT(hidden->breakdown.dp_comm_s, 0.01 * hidden->iteration_s);
  EXPECT_GT(exposed->breakdown.dp_comm_s, 0.2 * exposed->iteration_s);
  const NamedComm a = named_comm(hidden->timeline, 0), b = named_comm(exposed->timeline, 0);
  const std::string gather = "ZeRO-3 all-gather · dp x cp 64 · across nodes";
  const std::string scatter = "ZeRO-3 reduce-scatter · dp x cp 64 · across nodes";
  ASSERT_TRUE(a.by_name.contains(gather) && a.by_name.contains(scatter));
  EXPECT_GT(a.hidden_spans, 0u);
  EXPECT_TRUE(a.hidden_inside_compute) << "hidden collectives are drawn under compute";
  EXPECT_EQ(b.hidden_spans, 0u) << "without prefetch nothing is hidden";
  // Hidden and exposed together take the time and bytes of the collectives that all wait
  // without prefetch (to a nanosecond per span); the bytes are the breakdown's.
  double time_a = 0, time_b = 0, bytes_a = 0, bytes_b = 0;
  for (const auto& [name, sum] : a.by_name) {
    if (name.rfind("ZeRO-3", 0) == 0) time_a += static_cast<double>(sum.first), bytes_a += sum.second;
  }
  for (const auto& [name, sum] : b.by_name) {
    if (name.rfind("ZeRO-3", 0) == 0) time_b += static_cast<double>(sum.first), bytes_b += sum.second;
  }
  EXPECT_NEAR(time_a, time_b, 8.0);
  EXPECT_NEAR(bytes_a, hidden->breakdown.dp_bytes, 1e-9 * bytes_a);
  EXPECT_NEAR(bytes_b, exposed->breakdown.dp_bytes, 1e-9 * bytes_b);
  // 3 x the parameters' bytes against DP's 2 (Sec. 7.2.2): gather in the forward and again in
  // the backward, reduce-scatter after it, each 63/64 of 14.9 GB (7.47e9 fp16 parameters).
  EXPECT_NEAR(bytes_a, 3 * 63.0 / 64 * 2 * e->parameters, 1e-6 * bytes_a);
  // Drawing them changes no figure of the estimate.
  EXPECT_DOUBLE_EQ(hidden->iteration_s, e->time.iteration_s);
}

// Context parallelism's ring exchange of K and V runs while attention computes; its exposed
// excess and its hidden part together carry its bytes.
TEST(TimeModel, ContextParallelRingIsDrawnUnderAttention) {
  Plan plan = default_plan();
  plan.layout.cp = 2;
  plan.training.attention = AttentionKernel::flash;  // CP runs on flash attention
  plan.training.global_batch = plan.dp() * 8;
  auto e = estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  auto t = predict_time(plan, e->padded_vocab);
  ASSERT_TRUE(t.ok());
  const NamedComm c = named_comm(t->timeline, 0);
  EXPECT_GT(c.hidden_spans, 0u);
  EXPECT_TRUE(c.hidden_inside_compute);
  double bytes = 0;
  for (const auto& [name, sum] : c.by_name) {
    if (name.rfind("CP ring exchange", 0) == 0) bytes += sum.second;
  }
  EXPECT_NEAR(bytes, t->breakdown.cp_bytes, 1e-9 * bytes);
}

TEST(TimeModel, PredictedTimelineHasEveryRankAndPhase) {
  auto plan = uniform_plan(4, 8, PipelineSchedule::one_f_one_b);
  auto e = estimate(plan);
  auto t = predict_time(plan, e->padded_vocab);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->timeline.tracks.size(), 8u) << "compute and communication lane per rank";
  std::size_t forwards = 0;
  for (const auto& track : t->timeline.tracks) {
    for (const auto& s : track.spans) forwards += s.phase == Phase::forward && track.lane == Lane::compute;
  }
  EXPECT_EQ(forwards, 4u * 8u) << "one forward per stage and micro-batch";
  EXPECT_NEAR(static_cast<double>(t->timeline.end_ns()) * 1e-9, t->iteration_s, 1e-6);
}

}  // namespace
}  // namespace plansight::estimator

namespace plansight::estimator {
namespace {

TEST(Placement, OrderDecidesWhichGroupStaysInsideANode) {
  Plan p = default_plan();  // TP 8 x PP 8 x DP 16 on 8-GPU nodes
  const auto eff = default_efficiency(p.cluster.gpu);
  EXPECT_EQ(group_stride(p.layout, 16, Group::tp), 1);
  EXPECT_EQ(group_stride(p.layout, 16, Group::dp), 8);
  EXPECT_EQ(group_stride(p.layout, 16, Group::pp), 128);
  ASSERT_TRUE(parse_placement("dp-tp-cp-pp", p.layout.placement));
  EXPECT_EQ(group_stride(p.layout, 16, Group::dp), 1);
  EXPECT_EQ(group_stride(p.layout, 16, Group::tp), 16);
  EXPECT_TRUE(group_link(p.cluster, p.layout, 16, Group::tp, eff.nvlink_fraction, eff.network_fraction).crosses_nodes);
  auto inner = estimate(default_plan());
  auto outer = estimate(p);
  ASSERT_TRUE(inner.ok() && outer.ok()) << outer.error_text();
  EXPECT_GT(outer->time.breakdown.tp_comm_s, 5 * inner->time.breakdown.tp_comm_s) << "TP over the network";
  bool warned = false;
  for (const auto& w : outer->warnings) warned = warned || w.field == "layout.placement";
  EXPECT_TRUE(warned);
  Placement q;
  EXPECT_FALSE(parse_placement("tp-cp-dp", q));
  EXPECT_FALSE(parse_placement("tp-tp-dp-pp", q));
  EXPECT_FALSE(parse_placement("tp-cp-dp-pp-xx", q));
  EXPECT_TRUE(parse_placement("pp-dp-cp-tp", q));
  EXPECT_EQ(to_string(q), "pp-dp-cp-tp");
  auto bad = parse_plan(R"({"layout": {"placement": "tp-dp"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].field, "layout.placement");
}

}  // namespace
}  // namespace plansight::estimator
