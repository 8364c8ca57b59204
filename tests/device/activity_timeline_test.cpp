// CUPTI-style activity records -> measured Timeline (tracks per rank/lane/stream, kinds, NVTX
// phase inheritance through launch correlation, clock offset) and the clock alignment it uses.
#include <gtest/gtest.h>

#include "plansight/runtime/cuda/activity_timeline.h"
#include "plansight/runtime/cuda/clock_alignment.h"

namespace plansight::runtime::cuda {
namespace {

namespace est = plansight::estimator;

ActivityRecord record(ActivityKind kind, std::int64_t start, std::int64_t end, std::string name) {
  ActivityRecord r;
  r.kind = kind;
  r.start_ns = start;
  r.end_ns = end;
  r.name = std::move(name);
  return r;
}

const est::Track* find_track(const est::Timeline& t, int rank, est::Lane lane) {
  for (const auto& track : t.tracks) {
    if (track.rank == rank && track.lane == lane) return &track;
  }
  return nullptr;
}

TEST(ActivityTimeline, PhaseComesFromTheRangeOpenAtLaunch) {
  std::vector<ActivityRecord> records;
  auto fwd = record(ActivityKind::range, 100, 500, "forward stage 0 mb 1");
  fwd.thread = 7;
  auto bwd = record(ActivityKind::range, 600, 900, "backward stage 0 mb 1");
  bwd.thread = 7;
  auto launch1 = record(ActivityKind::api_call, 150, 160, "cudaLaunchKernel");
  launch1.thread = 7;
  launch1.correlation = 1;
  auto launch2 = record(ActivityKind::api_call, 650, 660, "cudaLaunchKernel");
  launch2.thread = 7;
  launch2.correlation = 2;
  auto gemm = record(ActivityKind::kernel, 170, 300, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
  gemm.correlation = 1;
  gemm.stream = 13;
  auto gelu = record(ActivityKind::kernel, 670, 700, "gelu_backward_kernel");
  gelu.correlation = 2;
  gelu.stream = 13;
  records = {fwd, bwd, launch1, launch2, gemm, gelu};

  ActivityTimeline builder;
  builder.assign_stream(0, 13, StreamRole{2, est::Lane::compute, 0});
  builder.assign_thread(7, 2);
  const est::Timeline t = builder.build(records, "step", est::KernelClassifier());
  EXPECT_EQ(t.source, est::TimelineSource::measured);
  const est::Track* compute = find_track(t, 2, est::Lane::compute);
  ASSERT_NE(compute, nullptr);
  ASSERT_EQ(compute->spans.size(), 2u);
  EXPECT_EQ(compute->spans[0].phase, est::Phase::forward);
  EXPECT_TRUE(compute->spans[0].tensor_core) << "a cuBLAS GEMM kernel name is a tensor-core GEMM";
  EXPECT_EQ(compute->spans[0].duration_ns, 130);
  EXPECT_EQ(compute->spans[1].phase, est::Phase::backward);
  EXPECT_FALSE(compute->spans[1].tensor_core);
  const est::Track* host = find_track(t, 2, est::Lane::host);
  ASSERT_NE(host, nullptr);
  ASSERT_EQ(host->spans.size(), 2u);
  EXPECT_EQ(host->spans[0].kind, est::SpanKind::annotation);
  EXPECT_EQ(t.name_of(host->spans[0]), "forward stage 0 mb 1");
  // The model chunk and micro-batch come from the range name, as the probe's spans write them.
  EXPECT_EQ(compute->spans[0].stage, 0);
  EXPECT_EQ(compute->spans[0].micro_batch, 1);
}

// A range opened by thread 7 at `at`, an API call inside it that launches device work `kind`
// named `name` on stream 13 (correlation `id`).
std::vector<ActivityRecord> launched_in(const std::string& range, std::int64_t at, ActivityKind kind,
                                        const std::string& name, std::uint32_t id) {
  auto r = record(ActivityKind::range, at, at + 400, range);
  auto call = record(ActivityKind::api_call, at + 50, at + 60, "cudaLaunchKernel");
  auto work = record(kind, at + 70, at + 200, name);
  r.thread = call.thread = 7;
  call.correlation = work.correlation = id;
  work.stream = 13;
  return {r, call, work};
}

// `records` as launched_in() makes them (thread 7, stream 13), both rank 0's.
est::Timeline built_as_rank_0(const std::vector<ActivityRecord>& records) {
  ActivityTimeline builder;
  builder.assign_stream(0, 13, StreamRole{0, est::Lane::compute, 0});
  builder.assign_thread(7, 0);
  return builder.build(records, "step", est::KernelClassifier());
}

// Among virtual ranks on one GPU a probe collective is kernels and copies on the compute stream
// (the device communicator's sums and device-to-device copies): the range they run in says they
// are communication, while the phase stays the op's.
TEST(ActivityTimeline, KernelsOfACollectiveRangeAreCommunication) {
  auto records = launched_in("tp.all_reduce forward stage 0 mb 1", 100, ActivityKind::kernel,
                             "void plansight::runtime::cuda::sum_buffers_kernel<float>", 1);
  for (auto& r : launched_in("pp.send backward stage 1 mb 2", 600, ActivityKind::memcpy, "memcpy DtoD", 2)) {
    records.push_back(r);
  }
  const est::Timeline t = built_as_rank_0(records);
  const est::Track* compute = find_track(t, 0, est::Lane::compute);
  ASSERT_NE(compute, nullptr);
  ASSERT_EQ(compute->spans.size(), 2u);
  EXPECT_EQ(compute->spans[0].kind, est::SpanKind::collective);
  EXPECT_EQ(compute->spans[0].phase, est::Phase::forward);
  EXPECT_EQ(compute->spans[1].kind, est::SpanKind::send);
  EXPECT_EQ(compute->spans[1].phase, est::Phase::backward);
  EXPECT_EQ(compute->spans[1].stage, 1);
  EXPECT_EQ(comm_kind_from_range_name("zero3.all_gather forward stage 0 mb 0"), est::SpanKind::collective);
  EXPECT_EQ(comm_kind_from_range_name("pp.recv forward stage 1 mb 0"), est::SpanKind::recv);
  EXPECT_EQ(comm_kind_from_range_name("qkv forward stage 0 mb 0"), std::nullopt);
  EXPECT_EQ(comm_kind_from_range_name("forward stage 0 mb 1"), std::nullopt) << "a phase word alone is compute";
}

// Device work takes the operator of the compute range that launched it ("fc2" of "fc2 backward
// stage 0 mb 3"), interned among the names, so that a GPU step adds up per operator; a
// collective's work, and work in a phase's own range, have none.
TEST(ActivityTimeline, DeviceWorkTakesTheOperatorOfItsRange) {
  struct Launch {
    const char* range;
    ActivityKind kind;
    const char* name;
  };
  const Launch launches[] = {{"fc2 backward stage 0 mb 3", ActivityKind::kernel, "nvjet_sm90_tst_192x128_64x5"},
                             {"fc2 backward stage 0 mb 3", ActivityKind::memset, "memset"},
                             {"tp.all_reduce backward stage 0 mb 3", ActivityKind::kernel, "sum_buffers_kernel"},
                             {"forward stage 0 mb 1", ActivityKind::kernel, "gelu_forward_kernel"}};
  std::vector<ActivityRecord> records;
  std::uint32_t id = 0;
  for (const Launch& l : launches) {
    for (auto& r : launched_in(l.range, 100 + 500 * id, l.kind, l.name, id + 1)) records.push_back(r);
    ++id;
  }
  const est::Timeline t = built_as_rank_0(records);
  const est::Track* compute = find_track(t, 0, est::Lane::compute);
  ASSERT_TRUE(compute != nullptr && compute->spans.size() == 4u);
  EXPECT_EQ(t.name_of(compute->spans[0]), "nvjet_sm90_tst_192x128_64x5") << "the kernel keeps its own name";
  EXPECT_EQ(t.operator_of(compute->spans[0]), "fc2");
  EXPECT_EQ(compute->spans[1].kind, est::SpanKind::memset);
  EXPECT_EQ(compute->spans[1].operator_id, compute->spans[0].operator_id);
  EXPECT_EQ(compute->spans[2].operator_id, -1) << "a collective's work";
  EXPECT_EQ(compute->spans[3].operator_id, -1) << "a phase's own range";
  EXPECT_EQ(t.operator_of(compute->spans[3]), "gelu_forward_kernel") << "without an operator: the span's own name";
  // Every operator the probe's ranges name (probe/src/transformer_block.cpp, embedding_head.cpp).
  for (const char* op : {"ln1", "qkv", "attention", "proj", "residual", "ln2", "fc1", "gelu", "fc2", "lnf", "lm_head",
                         "cross_entropy", "embedding"}) {
    EXPECT_EQ(operator_from_range_name(std::string(op) + " backward stage 3 mb 1"), op);
  }
  EXPECT_EQ(operator_from_range_name("attention forward stage 1 mb 0"), "attention");
  EXPECT_EQ(operator_from_range_name("lm_head backward"), "lm_head");
  EXPECT_EQ(operator_from_range_name("step"), "");
  EXPECT_EQ(operator_from_range_name("recompute block 2"), "");
  EXPECT_EQ(operator_from_range_name("pp.send forward stage 0 mb 1"), "");
}

TEST(ActivityTimeline, NumbersAfterWordsOfTheRangeName) {
  EXPECT_EQ(number_after("qkv forward stage 12 mb 3", "stage"), 12);
  EXPECT_EQ(number_after("qkv forward stage 12 mb 3", "mb"), 3);
  EXPECT_EQ(number_after("qkv forward", "stage"), -1);
  EXPECT_EQ(number_after("substage 4", "stage"), -1) << "a whole word only";
  EXPECT_EQ(number_after("stage x mb 2", "stage"), -1) << "digits must follow";
  EXPECT_EQ(number_after("stages 1 stage 5", "stage"), 5);
}

TEST(ActivityTimeline, InnermostRangeWins) {
  auto outer = record(ActivityKind::range, 0, 1000, "forward");
  auto inner = record(ActivityKind::range, 100, 200, "recompute block 2");
  auto launch = record(ActivityKind::api_call, 150, 151, "cudaLaunchKernel");
  launch.correlation = 9;
  auto kernel = record(ActivityKind::kernel, 160, 170, "layernorm_forward_kernel");
  kernel.correlation = 9;
  const est::Timeline t = ActivityTimeline().build({outer, inner, launch, kernel}, "t", est::KernelClassifier());
  const est::Track* compute = find_track(t, 0, est::Lane::compute);
  ASSERT_NE(compute, nullptr);
  EXPECT_EQ(compute->spans.at(0).phase, est::Phase::recompute);
}

TEST(ActivityTimeline, UnassignedStreamsGoToTheDeviceRankByKind) {
  auto nccl = record(ActivityKind::kernel, 0, 50, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  nccl.device = 3;
  nccl.stream = 21;
  auto copy = record(ActivityKind::memcpy, 10, 20, "memcpy HtoD");
  copy.device = 3;
  copy.stream = 22;
  copy.bytes = 4096;
  auto set = record(ActivityKind::memset, 30, 35, "memset");
  set.device = 3;
  set.stream = 22;
  const est::Timeline t = ActivityTimeline().build({nccl, copy, set}, "t", est::KernelClassifier());
  const est::Track* comm = find_track(t, 3, est::Lane::communication);
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->stream, 21);
  EXPECT_EQ(comm->spans.at(0).kind, est::SpanKind::collective);
  EXPECT_EQ(comm->spans.at(0).phase, est::Phase::communication);
  const est::Track* copies = find_track(t, 3, est::Lane::copy);
  ASSERT_NE(copies, nullptr);
  ASSERT_EQ(copies->spans.size(), 2u);
  EXPECT_EQ(copies->spans[0].kind, est::SpanKind::memcpy);
  EXPECT_EQ(copies->spans[0].bytes, 4096.0);
  EXPECT_EQ(copies->spans[1].kind, est::SpanKind::memset);
}

TEST(ActivityTimeline, ClockOffsetMovesEverySpan) {
  ActivityTimeline builder;
  builder.set_clock_offset_ns(-1000);
  auto sync = record(ActivityKind::synchronization, 5000, 7000, "cudaStreamSynchronize");
  auto kernel = record(ActivityKind::kernel, 3000, 3500, "adamw_kernel");
  const est::Timeline t = builder.build({sync, kernel}, "t", est::KernelClassifier());
  const est::Track* host = find_track(t, 0, est::Lane::host);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->spans.at(0).start_ns, 4000);
  EXPECT_EQ(host->spans.at(0).kind, est::SpanKind::idle);
  EXPECT_EQ(find_track(t, 0, est::Lane::compute)->spans.at(0).start_ns, 2000);
}

TEST(ActivityTimeline, PhaseWordsInRangeNames) {
  EXPECT_EQ(phase_from_range_name("Forward"), est::Phase::forward);
  EXPECT_EQ(phase_from_range_name("bwd.qkv"), est::Phase::backward);
  EXPECT_EQ(phase_from_range_name("backward wgrad fc1"), est::Phase::weight_grad);
  EXPECT_EQ(phase_from_range_name("optimizer"), est::Phase::optimizer);
  EXPECT_EQ(phase_from_range_name("dp.all_reduce"), est::Phase::communication);
  EXPECT_EQ(phase_from_range_name("pp.send"), est::Phase::communication);
  EXPECT_EQ(phase_from_range_name("data loader"), est::Phase::none);
}

TEST(ClockAlignment, NarrowestWindowWins) {
  // other = cpu - 1'000'000 exactly; the wide sample's midpoint is off by 400 ns.
  const std::vector<ClockSample> samples = {{1000, 1200 - 1'000'000 + 400, 2400},
                                            {5000, 5010 - 1'000'000, 5020}};
  const auto aligned = align_clocks(samples);
  ASSERT_TRUE(aligned.ok()) << aligned.error_text();
  EXPECT_EQ(aligned->offset_ns, 1'000'000);
  EXPECT_EQ(aligned->uncertainty_ns, 10);
  EXPECT_EQ(aligned->to_cpu_ns(0), 1'000'000);
}

TEST(ClockAlignment, RejectsNoSamplesAndBackwardWindows) {
  EXPECT_FALSE(align_clocks({}).ok());
  const auto backwards = align_clocks({{10, 5, 9}});
  ASSERT_FALSE(backwards.ok());
  EXPECT_NE(backwards.error_text().find("samples[0]"), std::string::npos) << backwards.error_text();
}

TEST(ClockAlignment, DriftInPartsPerMillion) {
  const ClockAlignment first{1000, 5}, second{1050, 5};
  const auto drift = clock_drift_ppm(first, 0, second, 1'000'000);  // 50 ns over 1 ms
  ASSERT_TRUE(drift.ok());
  EXPECT_DOUBLE_EQ(*drift, 50.0);
  EXPECT_FALSE(clock_drift_ppm(first, 7, second, 7).ok());
}

}  // namespace
}  // namespace plansight::runtime::cuda
