// The pieces of `plansight compare` that are pure functions: the collective link fitted to a
// profile recovers the latency and bandwidth it was generated with (the estimator's own cost
// form), step_phases() splits a hand-made timeline as stated, and a stored request becomes the
// plan of exactly that configuration.
#include <gtest/gtest.h>

#include <cmath>

#include "plansight/core/operator_comparison.h"
#include "plansight/core/plan_run_comparison.h"
#include "plansight/core/probe_events.h"
#include "plansight/core/probe_plan.h"
#include "plansight/core/step_phases.h"
#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_metrics.h"
#include "probe_plan_fixture.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

TEST(FitCollectiveLink, RecoversLatencyAndBandwidth) {
  est::HardwareProfile p;
  const est::Link truth{2e9, 5e-6, false};
  for (auto op : {est::Collective::all_reduce, est::Collective::all_gather, est::Collective::send_recv}) {
    for (std::int64_t n : {2, 4}) {
      for (double bytes : {1024.0, 65536.0, 4194304.0}) {
        if (op == est::Collective::send_recv && n != 2) continue;
        p.collectives.push_back({op, n, bytes, est::collective_seconds(op, bytes, n, truth), false});
      }
    }
  }
  const auto link = fit_collective_link(p);
  EXPECT_NEAR(link.latency_s, 5e-6, 1e-8);
  EXPECT_NEAR(link.bandwidth_bytes_per_s, 2e9, 2e9 * 1e-6);
}

TEST(FitCollectiveLink, EmptyProfileGivesNothing) {
  const auto link = fit_collective_link(est::HardwareProfile{});
  EXPECT_EQ(link.bandwidth_bytes_per_s, 0);
  EXPECT_EQ(link.latency_s, 0);
}

est::Span span(std::int64_t start, std::int64_t duration, est::Phase phase, est::SpanKind kind = est::SpanKind::kernel) {
  est::Span s;
  s.start_ns = start;
  s.duration_ns = duration;
  s.phase = phase;
  s.kind = kind;
  return s;
}

TEST(StepPhases, SplitsEachRankAndAverages) {
  est::Timeline t;
  // Rank 0: F 0-10, B 10-30, exposed comm 30-35 (a collective 25-35 overlaps B by 5), O 35-40, idle 40-50.
  t.tracks.push_back({0, est::Lane::compute, -1, "r0", {span(0, 10, est::Phase::forward), span(10, 20, est::Phase::backward),
                                                        span(35, 5, est::Phase::optimizer)}});
  t.tracks.push_back({0, est::Lane::communication, -1, "r0c", {span(25, 10, est::Phase::communication, est::SpanKind::collective)}});
  // Rank 1: idle 0-20, F 20-30, B with a nested annotation of the same step 30-50.
  t.tracks.push_back({1, est::Lane::compute, -1, "r1", {span(20, 10, est::Phase::forward), span(30, 20, est::Phase::backward)}});
  t.tracks.push_back({1, est::Lane::host, -1, "r1h", {span(30, 20, est::Phase::backward, est::SpanKind::annotation)}});
  const auto p = step_phases(t);
  EXPECT_DOUBLE_EQ(p.step_s, 50e-9);
  EXPECT_DOUBLE_EQ(p.forward_s, 10e-9);
  EXPECT_DOUBLE_EQ(p.backward_s, 20e-9) << "the annotation over rank 1's backward counts once";
  EXPECT_DOUBLE_EQ(p.communication_s, 2.5e-9);
  EXPECT_DOUBLE_EQ(p.optimizer_s, 2.5e-9);
  EXPECT_DOUBLE_EQ(p.idle_s, 15e-9);
  EXPECT_DOUBLE_EQ(p.forward_s + p.backward_s + p.communication_s + p.optimizer_s + p.idle_s + p.other_s, p.step_s);
}

// Two ranks sharing one processor, the same 20 ns of forward work three ways: a GPU runs one
// rank's kernel after the other's (measured), the time model shares the processor and draws one
// track for both ranks (predicted, stretched), a CPU time-slices the two threads. Counted as
// processor time, all three read 20 ns of forward and no idle; averaged per rank they would read
// 10 ns of forward and 10 of idle, 20 of forward, and 20 of forward.
TEST(StepPhases, SharedProcessorsCountProcessorTimeAlikeForEveryWayOfSharing) {
  est::Timeline gpu;
  gpu.tracks.push_back({0, est::Lane::compute, -1, "r0", {span(0, 10, est::Phase::forward)}});
  gpu.tracks.push_back({1, est::Lane::compute, -1, "r1", {span(10, 10, est::Phase::forward)}});
  est::Timeline model;
  model.tracks.push_back({0, est::Lane::compute, -1, "stage 0 (2 ranks)", {span(0, 20, est::Phase::forward)}});
  est::Timeline cpu;
  cpu.tracks.push_back({0, est::Lane::compute, -1, "r0", {span(0, 20, est::Phase::forward)}});
  cpu.tracks.push_back({1, est::Lane::compute, -1, "r1", {span(0, 20, est::Phase::forward)}});
  for (const auto& [name, phases] : {std::pair{"gpu", step_phases(gpu, 1)}, std::pair{"model", step_phases(model, 1, 2)},
                                     std::pair{"cpu", step_phases(cpu, 1)}}) {
    EXPECT_DOUBLE_EQ(phases.forward_s, 20e-9) << name;
    EXPECT_DOUBLE_EQ(phases.idle_s, 0) << name;
    EXPECT_DOUBLE_EQ(phases.step_s, 20e-9) << name;
  }
  // Per rank, without the processors: the GPU's wait reads as idle.
  EXPECT_DOUBLE_EQ(step_phases(gpu).forward_s, 10e-9);
  EXPECT_DOUBLE_EQ(step_phases(gpu).idle_s, 10e-9);
  // As many processors as ranks: nothing is shared, per-rank averages as before.
  EXPECT_DOUBLE_EQ(step_phases(gpu, 2).forward_s, 10e-9);
  // Two processors for 2 x 2 ranks drawn as two tracks of two: one stage busy uses both.
  est::Timeline two_stages;
  two_stages.tracks.push_back({0, est::Lane::compute, -1, "stage 0", {span(0, 10, est::Phase::forward)}});
  two_stages.tracks.push_back({1, est::Lane::compute, -1, "stage 1", {span(10, 10, est::Phase::backward)}});
  const auto shared = step_phases(two_stages, 2, 2);
  EXPECT_DOUBLE_EQ(shared.forward_s, 10e-9);
  EXPECT_DOUBLE_EQ(shared.backward_s, 10e-9);
  EXPECT_DOUBLE_EQ(shared.idle_s, 0);
}

// Two CPU rank threads on one core, as the CPU probe measures them: each span also has the CPU
// time its thread ran in it (Span::cpu_ns). Rank 0 computes 0-20 but ran for 12 ns of it (the
// core went to rank 1 for the rest), then blocks in a collective 20-40 that ran 1 ns; rank 1
// computes 0-30, running 16 ns, then its collective 30-40 ran 2 ns. Processor time reads the
// clocks as they are: 28 ns of forward and 3 of communication over the one core, the rest of the
// 40 ns idle; by wall time rank 0's blocked 20 ns would have read as communication.
TEST(StepPhases, ThreadCpuTimesAreTheProcessorTimeOfTheirSpans) {
  est::Timeline cpu;
  auto timed = [](est::Span s, std::int64_t cpu_ns) {
    s.cpu_ns = cpu_ns;
    return s;
  };
  cpu.tracks.push_back({0, est::Lane::compute, -1, "r0", {timed(span(0, 20, est::Phase::forward), 12)}});
  cpu.tracks.push_back({0, est::Lane::communication, -1, "r0c",
                        {timed(span(20, 20, est::Phase::forward, est::SpanKind::collective), 1)}});
  cpu.tracks.push_back({1, est::Lane::compute, -1, "r1", {timed(span(0, 30, est::Phase::forward), 16)}});
  cpu.tracks.push_back({1, est::Lane::communication, -1, "r1c",
                        {timed(span(30, 10, est::Phase::forward, est::SpanKind::collective), 2)}});
  const auto p = step_phases(cpu, 1);
  EXPECT_DOUBLE_EQ(p.step_s, 40e-9);
  EXPECT_DOUBLE_EQ(p.forward_s, 28e-9);
  EXPECT_DOUBLE_EQ(p.communication_s, 3e-9);
  EXPECT_DOUBLE_EQ(p.idle_s, 9e-9);
  EXPECT_DOUBLE_EQ(p.forward_s + p.backward_s + p.communication_s + p.optimizer_s + p.idle_s + p.other_s, p.step_s);
  // Per rank (no shared processors), the clocks are not read: wall time, as for any timeline.
  const auto per_rank = step_phases(cpu);
  EXPECT_DOUBLE_EQ(per_rank.forward_s, 25e-9);
  // A span without a CPU time beside them is inferred as before: alone on the core, at full rate.
  auto mixed = cpu;
  mixed.tracks.push_back({2, est::Lane::compute, -1, "r2", {span(40, 10, est::Phase::backward)}});
  EXPECT_DOUBLE_EQ(step_phases(mixed, 1).backward_s, 10e-9);
}

// A CPU run's phases are processor time only when its timeline has the threads' CPU clocks;
// a GPU run's whenever its virtual ranks outnumber the GPUs.
TEST(StepPhases, CpuRunsCountProcessorTimeOnlyWithTheirThreadsClocks) {
  est::Plan plan = est::default_plan();
  plan.cluster.gpu.name = "cpu";
  plan.cluster.gpus = 4;
  plan.cluster.shared_processors = 2;
  est::Timeline wall;
  wall.tracks.push_back({0, est::Lane::compute, -1, "r0", {span(0, 10, est::Phase::forward)}});
  EXPECT_EQ(shared_processors_of(plan, &wall), 0) << "wall time alone: per rank";
  EXPECT_EQ(shared_processors_of(plan, nullptr), 0);
  est::Timeline clocked = wall;
  clocked.tracks[0].spans[0].cpu_ns = 7;
  EXPECT_TRUE(has_cpu_times(clocked));
  EXPECT_FALSE(has_cpu_times(wall));
  EXPECT_EQ(shared_processors_of(plan, &clocked), 2);
  EXPECT_NE(shared_phases_note(2, plan).find("2 cores"), std::string::npos) << shared_phases_note(2, plan);
  plan.cluster.shared_processors = 4;
  EXPECT_EQ(shared_processors_of(plan, &clocked), 0) << "a core per rank: nothing is shared";
  est::Plan gpu = plan;
  gpu.cluster.gpu.name = "NVIDIA H200";
  gpu.cluster.shared_processors = 1;
  EXPECT_EQ(shared_processors_of(gpu, &wall), 1);
  EXPECT_NE(shared_phases_note(1, gpu).find("one GPU"), std::string::npos) << shared_phases_note(1, gpu);
  // Why a virtual-rank run's communication reads far above its measurement, and its idle below.
  EXPECT_NE(shared_phases_note(1, gpu).find("the meeting shows as idle"), std::string::npos);
  EXPECT_EQ(shared_phases_note(2, plan).find("meeting"), std::string::npos) << "the rank threads of a CPU: not this note";
}

TEST(StepPhases, WaitingForAPeerIsBubbleNotCommunication) {
  est::Timeline t;
  const std::int32_t name = t.intern("tp.all_reduce");
  auto collective = [&](std::int64_t start, std::int64_t duration) {
    auto s = span(start, duration, est::Phase::forward, est::SpanKind::collective);
    s.name_id = name;
    s.stage = 0;
    s.micro_batch = 0;
    return s;
  };
  // Rank 0 enters the all-reduce at 10, rank 1 at 30 (it computed until then); both leave at 40.
  t.tracks.push_back({0, est::Lane::compute, -1, "r0", {span(0, 10, est::Phase::forward)}});
  t.tracks.push_back({0, est::Lane::communication, -1, "r0c", {collective(10, 30)}});
  t.tracks.push_back({1, est::Lane::compute, -1, "r1", {span(0, 30, est::Phase::forward)}});
  t.tracks.push_back({1, est::Lane::communication, -1, "r1c", {collective(30, 10)}});
  const auto p = step_phases(t);
  EXPECT_DOUBLE_EQ(p.communication_s, 10e-9) << "both ranks move data from 30 to 40";
  EXPECT_DOUBLE_EQ(p.waiting_s, 10e-9) << "rank 0 waits 20 ns, rank 1 none: 10 on average";
  EXPECT_DOUBLE_EQ(p.idle_s, 10e-9);
  EXPECT_DOUBLE_EQ(p.forward_s, 20e-9);

  // `analyze` (rank_breakdown) reads the same timeline by the same rule (peer_waiting.h): exposed
  // communication 10 ns on each rank, rank 0's 20 ns before its peer arrived as waiting.
  const auto ranks = est::rank_breakdown(t);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].communication_ns, 30);
  EXPECT_EQ(ranks[0].exposed_communication_ns, 10);
  EXPECT_EQ(ranks[0].waiting_ns, 20);
  EXPECT_EQ(ranks[1].exposed_communication_ns, 10);
  EXPECT_EQ(ranks[1].waiting_ns, 0);
  double exposed_s = 0;
  for (const auto& r : ranks) exposed_s += static_cast<double>(r.exposed_communication_ns) * 1e-9 / 2;
  EXPECT_DOUBLE_EQ(exposed_s, p.communication_s) << "one definition of exposed communication";
}

TEST(ProbePlan, IsTheRunsConfigurationOnTheMeasuredDevice) {
  const nlohmann::json request = {
      {"model", {{"name", "small"}, {"layers", 4}, {"hidden", 128}, {"heads", 4}, {"kv_heads", 4}, {"ffn_hidden", 512},
                 {"vocab", 256}, {"max_seq_len", 128}, {"dropout", false}}},
      {"layout", {{"tp", 2}, {"pp", 2}, {"dp", 1}, {"schedule", "1f1b"}}},
      {"micro_batch", 1}, {"global_batch", 4}, {"seq_len", 128}, {"steps", 10}};
  est::HardwareProfile profile;
  profile.device = "cpu: test";
  profile.peak_flops = 5e10;
  profile.memory_bandwidth_bytes_per_s = 1e10;
  profile.collectives.push_back({est::Collective::all_reduce, 2, 1 << 20, 1e-3, false});
  auto plan = plan_of_probe_run(request, profile);
  ASSERT_TRUE(plan.ok()) << plan.error_text();
  EXPECT_EQ(plan->cluster.gpus, 4);
  EXPECT_EQ(plan->cluster.gpus_per_node, 4);
  EXPECT_EQ(plan->layout.tp, 2);
  EXPECT_EQ(plan->training.global_batch, 4);
  EXPECT_EQ(plan->training.precision, est::Precision::fp32);
  EXPECT_EQ(plan->training.reserve_fixed_bytes, 0);
  EXPECT_DOUBLE_EQ(plan->cluster.gpu.peak_fp32_flops, 5e10);
  EXPECT_GT(plan->cluster.intra_node_bandwidth_bytes_per_s, 0);
  EXPECT_FALSE(has_errors(est::validate(*plan))) << join_messages(est::validate(*plan));
  EXPECT_FALSE(plan_of_probe_run(nlohmann::json::object(), profile).ok()) << "a run without a request has no plan";
  EXPECT_EQ(plan->cluster.shared_processors, 0) << "a request before the cores field: a processor per rank";

  // Four rank threads on two cores: the prediction shares two processors among them and takes
  // longer than with a core per rank; a rank with 2 BLAS threads takes two cores.
  auto shared_request = request;
  shared_request["cores"] = 2;
  auto shared = plan_of_probe_run(shared_request, profile);
  ASSERT_TRUE(shared.ok()) << shared.error_text();
  EXPECT_EQ(shared->cluster.shared_processors, 2);
  auto own = est::predict_time(*plan, est::padded_vocab(256, 2));
  auto two = est::predict_time(*shared, est::padded_vocab(256, 2));
  ASSERT_TRUE(own.ok() && two.ok());
  EXPECT_GT(two->iteration_s, 1.3 * own->iteration_s);
  shared_request["threads_per_rank"] = 2;
  EXPECT_EQ(plan_of_probe_run(shared_request, profile)->cluster.shared_processors, 1);
}

}  // namespace
// A GPU run of virtual ranks: the plan computes in the request's precision with fp32 gradients
// and master weights (the probe's mixed precision), holds the GPU's memory, and shares the one
// GPU among its ranks, so TP 2 on one GPU is predicted slower than TP 2 on two.
// A GPU run's device report (GPU, precision, tensor-core share) is kept with the run, and the
// step's share is a metric; a CPU run has neither.
TEST(ProbeSummary, KeepsTheDeviceReportAndTensorCoreShare) {
  auto request = probe::probe_request_from_json(
      {{"model", "gpt2-124m"}, {"global_batch", 8}, {"seq_len", 1024}, {"layout", {{"tp", 2}}}});
  ASSERT_TRUE(request) << request.error_text();
  probe::ProbeResult result;
  result.steps = {{1, 10.9, 0.05, 0, false}};
  result.step_time_s = 0.04;
  const auto cpu = summary_of(result, *request);
  EXPECT_TRUE(cpu.device.empty());
  EXPECT_EQ(cpu.metrics.count("tensor_core_share"), 0u);
  EXPECT_DOUBLE_EQ(cpu.metrics.at("tokens_per_s"), 8 * 1024 / 0.04);
  EXPECT_EQ(cpu.metrics.at("world_size"), 2);

  result.device_report = {{"gpu", "NVIDIA H100 80GB HBM3"},
                          {"precision", "bf16"},
                          {"tensor_cores", {{"source", "kernel-name rules"}, {"step", {{"share", 0.625}}}}}};
  const auto gpu = summary_of(result, *request);
  EXPECT_EQ(gpu.device, result.device_report);
  EXPECT_DOUBLE_EQ(gpu.metrics.at("tensor_core_share"), 0.625);
}

// A run stopped before its timed steps has no median step of its own: the steps it made count.
TEST(ProbeSummary, AStoppedRunIsTimedByTheStepsItMade) {
  auto request = probe::probe_request_from_json({{"model", "tiny"}});
  ASSERT_TRUE(request) << request.error_text();
  probe::ProbeResult result;
  result.steps = {{1, 5.0, 0.3, 0, false}, {2, std::nan(""), 0.1, 0, false}};
  result.stopped_early = true;
  const auto s = summary_of(result, *request);
  ASSERT_TRUE(s.step_time_s);
  EXPECT_DOUBLE_EQ(*s.step_time_s, 0.2);
  EXPECT_TRUE(std::isnan(s.loss_per_step.at(1)));
  EXPECT_EQ(s.metrics.at("stopped_early"), 1);
  probe::RankMemory a, b;
  a.peak.weights_bytes = 100;
  a.peak_total_bytes = 300;
  b.peak.weights_bytes = 50;
  b.peak.activations_bytes = 70;
  b.peak_total_bytes = 400;
  result.memory = {a, b};
  const auto memory = measured_memory(result);
  EXPECT_EQ(memory.at("weights"), 100);
  EXPECT_EQ(memory.at("activations"), 70);
  EXPECT_EQ(memory.at("total"), 400) << "the largest whole-rank peak, not the sum of the largest categories";
}

TEST(ProbePlan, VirtualRanksOnOneGpuShareIt) {
  const nlohmann::json request = {
      {"model", {{"name", "small"}, {"layers", 4}, {"hidden", 128}, {"heads", 4}, {"kv_heads", 4}, {"ffn_hidden", 512},
                 {"vocab", 256}, {"max_seq_len", 128}, {"dropout", false}}},
      {"layout", {{"tp", 2}, {"pp", 1}, {"dp", 1}, {"schedule", "1f1b"}}},
      {"micro_batch", 4}, {"global_batch", 4}, {"seq_len", 128}, {"steps", 10},
      {"device", "cuda"}, {"precision", "bf16"}};
  est::HardwareProfile profile;
  profile.device = "cuda: NVIDIA H100 80GB HBM3 (sm_90, 79.2 GiB)";
  profile.peak_flops = 6e14;
  profile.memory_bandwidth_bytes_per_s = 2.5e12;
  profile.collectives.push_back({est::Collective::all_reduce, 2, 1 << 20, 2e-5, false});
  auto plan = plan_of_probe_run(request, profile);
  ASSERT_TRUE(plan.ok()) << plan.error_text();
  EXPECT_EQ(plan->training.precision, est::Precision::bf16);
  EXPECT_EQ(plan->training.grad_precision, est::Precision::fp32);
  EXPECT_EQ(plan->training.master_precision, est::MasterPrecision::fp32);
  EXPECT_EQ(plan->cluster.shared_processors, 1);
  EXPECT_NEAR(static_cast<double>(plan->cluster.gpu.memory_bytes), 79.2 * (1LL << 30), 1e6);
  EXPECT_DOUBLE_EQ(plan->cluster.gpu.peak_bf16_flops, 6e14) << "no bf16 GEMM measured: the overall peak";
  // Each precision's peak is its fastest measured GEMM: fp32 on CUDA cores is not bf16's.
  est::HardwareProfile measured = profile;
  est::GemmSample fp32{}, bf16{};
  fp32.precision = est::Precision::fp32;
  fp32.m = fp32.n = fp32.k = 4096;
  fp32.seconds = 2.0 * 4096 * 4096 * 4096 / 5e13;  // 50 TFLOP/s
  bf16 = fp32;
  bf16.precision = est::Precision::bf16;
  bf16.seconds = 2.0 * 4096 * 4096 * 4096 / 6e14;  // 600 TFLOP/s
  measured.gemms = {fp32, bf16};
  auto per_precision = plan_of_probe_run(request, measured);
  ASSERT_TRUE(per_precision.ok()) << per_precision.error_text();
  EXPECT_NEAR(per_precision->cluster.gpu.peak_fp32_flops, 5e13, 1e3);
  EXPECT_NEAR(per_precision->cluster.gpu.peak_bf16_flops, 6e14, 1e4);
  EXPECT_DOUBLE_EQ(per_precision->cluster.gpu.peak_tf32_flops, 6e14) << "tf32 not measured: the overall peak";
  EXPECT_FALSE(has_errors(est::validate(*plan))) << join_messages(est::validate(*plan));
  auto own_gpus = *plan;
  own_gpus.cluster.shared_processors = 0;
  auto shared = est::predict_time(*plan, est::padded_vocab(256, 2));
  auto separate = est::predict_time(own_gpus, est::padded_vocab(256, 2));
  ASSERT_TRUE(shared.ok() && separate.ok()) << shared.error_text() << separate.error_text();
  EXPECT_GT(shared->iteration_s, 1.3 * separate->iteration_s) << "two ranks' kernels take turns on one GPU";
  // One rank alone has the GPU to itself.
  auto single_request = request;
  single_request["layout"]["tp"] = 1;
  EXPECT_EQ(plan_of_probe_run(single_request, profile)->cluster.shared_processors, 0);
  // Under a launcher each process has its own GPU: one rank per process shares nothing (a run
  // of mpirun -np 2 over NCCL was predicted as two ranks taking turns on one GPU).
  const nlohmann::json launched = {{"launch", {{"launcher", "mpirun"}, {"processes", 2}}}};
  EXPECT_EQ(launched_processes(launched), 2);
  EXPECT_EQ(launched_processes(nlohmann::json::object()), 1);
  EXPECT_EQ(plan_of_probe_run(request, profile, launched_processes(launched))->cluster.shared_processors, 0);
  auto four = request;
  four["layout"]["dp"] = 2;
  four["global_batch"] = 8;
  EXPECT_EQ(plan_of_probe_run(four, profile, 2)->cluster.shared_processors, 2) << "4 ranks on 2 GPUs";
}

}  // namespace plansight::core

namespace plansight::core {
namespace {

// Full recomputation on the stage that holds the head: the last layer is recomputed after the
// head's backward has freed the logits, so the peak is the stored layer inputs plus the head, not
// plus a recomputed layer as well. Measured by the probe (GPT-2 124M, micro-batch 2 x 1,024,
// fp32 on a CPU): 489.03 MiB of activations at the peak (bench/results/gpu-check-h200-2026-11-28-b,
// README); the estimate said 681.00 MiB before the recomputed layer was counted in the
// backward's working set.
TEST(ProbePlan, FullRecomputationPeaksAtTheHeadNotAtHeadPlusALayer) {
  const auto run = testing::gpt2_run(
      {{"micro_batch", 2}, {"global_batch", 2}, {"seq_len", 1024}, {"layout", {{"recompute", "full"}}}}, "cpu: test");
  EXPECT_NEAR(run.estimate.memory.peak.activations_bytes / (1 << 20), 489.03, 489.03 * 0.01);
}

// ZeRO-3's buffers on the stage with the embedding: the unit gathered and reduce-scattered there
// is the word embedding, 5.5 layers of GPT-2 124M, not a layer. Measured by the probe on an H200
// (GPT-2 124M, bf16, DP 2 with ZeRO-3, micro-batch 2 x 1,024): 368.45 MiB of buffers at the peak,
// the embedding's gathered bf16 copy and two fp32 gradient buckets
// (bench/results/gpu-check-h200-2026-11-28-b); a layer's would be 67.6 MiB.
TEST(ProbePlan, ZeroThreeBuffersHoldTheLargestUnitTheWordEmbedding) {
  const auto run = testing::gpt2_run({{"micro_batch", 2}, {"global_batch", 16}, {"seq_len", 1024}, {"device", "cuda"},
                                      {"precision", "bf16"}, {"layout", {{"dp", 2}, {"zero_stage", 3}}}},
                                     testing::kH200);
  EXPECT_NEAR(run.estimate.memory.peak.buffers_bytes / (1 << 20), 368.45, 368.45 * 0.01);
}

}  // namespace
}  // namespace plansight::core

namespace plansight::core {
namespace {

// The per-operator rows add up to the compute the time model predicts for the step: the
// operator model is what the phases are made of, multiplied out to every rank and micro-batch
// (GPT-2 124M on a CPU, serial and with TP 2 x DP 2; recomputation adds its rows).
TEST(OperatorComparison, PredictedRowsAddUpToThePredictedCompute) {
  for (const nlohmann::json& request :
       {nlohmann::json{{"micro_batch", 2}, {"global_batch", 4}, {"seq_len", 256}},
        nlohmann::json{{"micro_batch", 1}, {"global_batch", 4}, {"seq_len", 256}, {"layout", {{"tp", 2}, {"dp", 2}}}},
        nlohmann::json{{"micro_batch", 1}, {"global_batch", 2}, {"seq_len", 256}, {"layout", {{"recompute", "full"}}}}}) {
    const auto run = testing::gpt2_run(request, "cpu: a test machine");
    auto predicted = est::predict_time(run.plan, run.estimate.padded_vocab);
    ASSERT_TRUE(predicted.ok()) << predicted.error_text();
    const StepPhases phases = step_phases(predicted->timeline);
    // One track per pipeline stage, standing for its TP x DP ranks: per-rank compute x ranks.
    const double ranks = static_cast<double>(run.plan.layout.tp * run.plan.layout.dp);
    const auto ops = compare_operators(run.plan, nullptr, run.estimate.padded_vocab, est::Timeline{});
    double sum = 0;
    for (const auto& r : ops.rows) {
      EXPECT_GT(r.predicted_s, 0) << r.probe_name;
      EXPECT_EQ(r.measured_calls, 0);
      sum += r.predicted_s;
    }
    EXPECT_NEAR(sum, (phases.forward_s + phases.backward_s) * ranks, 0.01 * sum) << request.dump();
    const bool recompute = request.contains("layout") && request["layout"].contains("recompute");
    const bool has_recompute_row = std::any_of(ops.rows.begin(), ops.rows.end(), [](const auto& r) { return r.phase == est::Phase::recompute; });
    EXPECT_EQ(has_recompute_row, recompute) << request.dump();
  }
}

// The measured side: each span of the probe's operators in its row by name and phase (weight
// gradients with the backward), its thread CPU clock where it has one, the rest counted apart;
// communication spans are in no row.
TEST(OperatorComparison, MeasuredSpansFallIntoTheirOperatorsRows) {
  const auto run = testing::gpt2_run({{"micro_batch", 1}, {"global_batch", 1}, {"seq_len", 128}}, "cpu: a test machine");
  est::Timeline t;
  auto named = [&](const char* name, std::int64_t start, std::int64_t duration, est::Phase phase, std::int64_t cpu_ns) {
    est::Span s = span(start, duration, phase);
    s.name_id = t.intern(name);
    s.cpu_ns = cpu_ns;
    return s;
  };
  t.tracks.push_back({0, est::Lane::compute, -1, "r0",
                      {named("qkv", 0, 500, est::Phase::forward, 300), named("qkv", 500, 200, est::Phase::forward, -1),
                       named("fc2", 700, 400, est::Phase::weight_grad, 350), named("embedding", 1100, 100, est::Phase::forward, 20),
                       named("gelu", 1200, 100, est::Phase::backward, 90)}});
  t.tracks.push_back({0, est::Lane::communication, -1, "r0c", {named("qkv", 0, 1000, est::Phase::forward, 5)}});
  const auto ops = compare_operators(run.plan, nullptr, run.estimate.padded_vocab, t);
  auto row = [&](const std::string& name, est::Phase phase) -> const OperatorComparison* {
    for (const auto& r : ops.rows) {
      if (r.probe_name == name && r.phase == phase) return &r;
    }
    return nullptr;
  };
  ASSERT_NE(row("qkv", est::Phase::forward), nullptr);
  EXPECT_DOUBLE_EQ(row("qkv", est::Phase::forward)->measured_s, 500e-9) << "300 ns by its clock + 200 ns without one";
  EXPECT_EQ(row("qkv", est::Phase::forward)->measured_calls, 2);
  EXPECT_EQ(row("qkv", est::Phase::forward)->operators, "QKV");
  ASSERT_NE(row("fc2", est::Phase::backward), nullptr);
  EXPECT_DOUBLE_EQ(row("fc2", est::Phase::backward)->measured_s, 350e-9);
  EXPECT_DOUBLE_EQ(row("gelu", est::Phase::backward)->measured_s, 90e-9);
  EXPECT_EQ(row("attention", est::Phase::forward)->measured_calls, 0);
  EXPECT_DOUBLE_EQ(ops.unmatched_measured_s, 20e-9);
  EXPECT_EQ(ops.unmatched_spans, 1);
  EXPECT_TRUE(ops.measured_cpu_time);
  EXPECT_TRUE(ops.matched());
  // Rows in the order a step runs them: the layer forward, its backward last operator first, then the head.
  ASSERT_GE(ops.rows.size(), 3U);
  EXPECT_EQ(ops.rows.front().probe_name, "ln1");
  EXPECT_EQ(ops.rows.back().phase, est::Phase::backward);
  EXPECT_EQ(ops.rows.back().probe_name, "lnf");
  // A GPU run names CUDA kernels: every span is left out of the rows.
  est::Timeline gpu;
  est::Span kernel = span(0, 100, est::Phase::forward);
  kernel.name_id = gpu.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  gpu.tracks.push_back({0, est::Lane::compute, -1, "r0", {kernel}});
  const auto none = compare_operators(run.plan, nullptr, run.estimate.padded_vocab, gpu);
  EXPECT_TRUE(std::all_of(none.rows.begin(), none.rows.end(), [](const auto& r) { return r.measured_calls == 0; }));
  EXPECT_EQ(none.unmatched_spans, 1);
  EXPECT_FALSE(none.matched());
  EXPECT_FALSE(none.measured_cpu_time);
  // ... unless each kernel, copy and memset carries the operator that launched it: then they add
  // up in its row by their durations (a memset inside "qkv" counts for qkv), and a memset without
  // one is in no row.
  kernel.operator_id = gpu.intern("qkv");
  est::Span memset = span(100, 30, est::Phase::forward);
  memset.kind = est::SpanKind::memset;
  memset.name_id = gpu.intern("memset");
  memset.operator_id = kernel.operator_id;
  est::Span loose = memset;
  loose.operator_id = -1;
  gpu.tracks = {{0, est::Lane::compute, -1, "r0", {kernel, memset, loose}}};
  const auto by_op = compare_operators(run.plan, nullptr, run.estimate.padded_vocab, gpu);
  ASSERT_TRUE(by_op.matched());
  EXPECT_TRUE(by_op.measured_device_work);
  EXPECT_FALSE(by_op.measured_cpu_time);
  const auto qkv = std::find_if(by_op.rows.begin(), by_op.rows.end(),
                                [](const auto& r) { return r.probe_name == "qkv" && r.phase == est::Phase::forward; });
  ASSERT_NE(qkv, by_op.rows.end());
  EXPECT_DOUBLE_EQ(qkv->measured_s, 130e-9);
  EXPECT_EQ(qkv->measured_calls, 2);
  EXPECT_EQ(by_op.unmatched_spans, 0) << "a memset with no operator is not compute";
  EXPECT_NE(by_op.measured_basis().find("GPU time"), std::string::npos) << by_op.measured_basis();
  EXPECT_NE(ops.measured_basis().find("thread CPU clock"), std::string::npos) << ops.measured_basis();
}

}  // namespace
}  // namespace plansight::core
