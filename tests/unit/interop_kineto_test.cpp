// Kineto import on the fixtures in tests/data/traces: a two-rank directory (current format,
// NCCL metadata on kernels and on record_param_comms, float-µs timestamps with a base time), its
// gzip twin, a 2021 legacy trace; bad input gives an error with the byte offset and no timeline.
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plansight/estimator/hta_metrics.h"
#include "plansight/estimator/timeline_json.h"
#include "plansight/estimator/timeline_metrics.h"
#include "plansight/interop/kineto_importer.h"
#include "plansight/interop/trace_import.h"

namespace plansight::interop {
namespace {

using estimator::Lane;
using estimator::SpanKind;

const std::string kFixtures = PLANSIGHT_TRACE_FIXTURE_DIR;
constexpr std::int64_t kBase = 1'700'000'000'000'000'000;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const estimator::Track* find_track(const estimator::Timeline& t, int rank, Lane lane, int stream, bool annotations = false) {
  for (const auto& tr : t.tracks) {
    const bool is_annotation = tr.label.find("annotations") != std::string::npos;
    if (tr.rank == rank && tr.lane == lane && tr.stream == stream && is_annotation == annotations) return &tr;
  }
  return nullptr;
}

TEST(KinetoImport, MultiRankDirectory) {
  auto r = import_kineto(kFixtures + "/kineto_multirank");
  ASSERT_TRUE(r.ok()) << r.error_text();
  const auto& t = r->timeline;
  EXPECT_EQ(t.source, estimator::TimelineSource::imported);
  ASSERT_EQ(r->ranks.size(), 2u);
  EXPECT_EQ(r->ranks[0].rank, 0);
  EXPECT_EQ(r->ranks[0].world_size, 2);
  EXPECT_EQ(r->ranks[0].device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r->ranks[0].time_base, TimeBase::epoch);
  EXPECT_EQ(r->ranks[0].base_time_ns, kBase);
  EXPECT_TRUE(r->ranks[0].fractional_timestamps);
  EXPECT_FALSE(r->ranks[1].fractional_timestamps);
  EXPECT_EQ(r->ranks[0].events_read, 17);

  // Rank 0: compute stream 7 (3 kernels), NCCL on stream 20, memcpy on stream 7's copy lane.
  const auto* compute = find_track(t, 0, Lane::compute, 7);
  ASSERT_NE(compute, nullptr);
  ASSERT_EQ(compute->spans.size(), 3u);
  EXPECT_EQ(compute->spans[0].start_ns, kBase + 1'000'125);  // 1000.125 µs after the base, exactly
  EXPECT_EQ(compute->spans[0].duration_ns, 100'000);
  EXPECT_TRUE(compute->spans[0].tensor_core);
  EXPECT_FALSE(compute->spans[1].tensor_core);
  EXPECT_EQ(compute->label, "GPU 0 stream 7");
  const auto* comm = find_track(t, 0, Lane::communication, 20);
  ASSERT_NE(comm, nullptr);
  ASSERT_EQ(comm->spans.size(), 2u);
  EXPECT_EQ(comm->spans[0].kind, SpanKind::collective);
  EXPECT_DOUBLE_EQ(comm->spans[0].bytes, 1048576.0 * 2);  // BFloat16 all-reduce
  EXPECT_DOUBLE_EQ(comm->spans[1].bytes, 524288.0 * 4);   // from record_param_comms (External id 77)
  const auto* copy = find_track(t, 0, Lane::copy, 7);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->spans[0].kind, SpanKind::memcpy);
  EXPECT_DOUBLE_EQ(copy->spans[0].bytes, 4096);
  const auto* host = find_track(t, 0, Lane::host, 4243);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->label, "thread 4243 (python main thread)");
  EXPECT_EQ(host->spans.size(), 3u);  // ProfilerStep annotation, aten::mm, record_param_comms; no runtime
  ASSERT_NE(find_track(t, 0, Lane::compute, 7, true), nullptr);

  // Phases from the GPU annotations: the GEMM is forward, the later work backward.
  EXPECT_EQ(compute->spans[0].phase, estimator::Phase::forward);
  EXPECT_EQ(compute->spans[1].phase, estimator::Phase::backward);
  EXPECT_EQ(comm->spans[1].phase, estimator::Phase::backward);
  EXPECT_EQ(comm->spans[0].phase, estimator::Phase::none);  // not enclosed by either annotation

  // Rank 1: events on device 1 (pid 1) belong to rank 1, from distributedInfo.
  const auto* r1 = find_track(t, 1, Lane::communication, 24);
  ASSERT_NE(r1, nullptr);  // multimem all-reduce is communication by our rules
  EXPECT_EQ(r1->label, "GPU 1 stream 24");
  ASSERT_NE(find_track(t, 1, Lane::copy, 7), nullptr);
}

TEST(KinetoImport, CollectiveMetadata) {
  auto r = import_kineto(kFixtures + "/kineto_multirank");
  ASSERT_TRUE(r.ok()) << r.error_text();
  const auto& c = r->collectives;
  ASSERT_EQ(c.size(), 4u);  // rank 0: all-reduce, all-gather; rank 1: multimem, all-gather
  EXPECT_EQ(c[0].rank, 0);
  EXPECT_EQ(c[0].kind, estimator::CollectiveKind::all_reduce);
  EXPECT_EQ(c[0].group_size, 2);
  EXPECT_EQ(c[0].dtype, "BFloat16");
  EXPECT_EQ(c[0].process_group, "0");
  const auto bw0 = estimator::collective_bandwidth(c[0]);
  EXPECT_NEAR(bw0.algbw_bytes_per_s, 2097152.0 / 150e-6, 1.0);
  EXPECT_NEAR(bw0.busbw_bytes_per_s, 2097152.0 / 150e-6 * 2 * (2 - 1) / 2, 1.0);
  EXPECT_EQ(c[1].kind, estimator::CollectiveKind::all_gather);
  EXPECT_EQ(c[1].dtype, "Float");
  EXPECT_NEAR(estimator::collective_bandwidth(c[1]).busbw_bytes_per_s, 2097152.0 / 140e-6 * 0.5, 1.0);
  EXPECT_EQ(c[2].rank, 1);
  EXPECT_EQ(c[2].kind, estimator::CollectiveKind::all_reduce);  // multimem, no metadata
  EXPECT_EQ(c[2].group_size, 0);
  EXPECT_EQ(c[3].group_size, 8);
  EXPECT_DOUBLE_EQ(c[3].bytes, 201088.0 * 2);  // all-gather: the gathered output
  EXPECT_NEAR(estimator::collective_bandwidth(c[3]).busbw_bytes_per_s, 402176.0 / 100e-6 * 7 / 8, 1.0);
}

TEST(KinetoImport, HandComputedHtaOverlapOnImportedFixture) {
  auto r = import_kineto(kFixtures + "/kineto_multirank");
  ASSERT_TRUE(r.ok()) << r.error_text();
  const auto hta = estimator::hta_comm_comp_overlap(r->timeline);
  ASSERT_EQ(hta.size(), 2u);
  // Rank 0 (µs after 1000.125): compute [0,100) [150,300) [400,450); NCCL [50,200) [280,420):
  // overlap 50 + 50 + 20 + 20 = 140 of 290 µs of merged communication.
  EXPECT_EQ(hta[0].overlap_ns, 140'000);
  EXPECT_EQ(hta[0].communication_ns, 290'000);
  EXPECT_DOUBLE_EQ(hta[0].ratio, 140.0 / 290.0);
  // Rank 1: HTA counts the multimem all-reduce as computation: comp [0,300), comm [250,350).
  EXPECT_DOUBLE_EQ(hta[1].ratio, 0.5);
  const auto ours = estimator::rank_breakdown(r->timeline);
  EXPECT_DOUBLE_EQ(ours[1].overlap_ratio, 0.4);  // multimem is communication: [100,350) vs [0,200)
  const auto tb = estimator::hta_temporal_breakdown(r->timeline);
  EXPECT_EQ(tb[0].kernel_ns, 470'000);
  EXPECT_EQ(tb[0].idle_ns, 10'000);
  EXPECT_EQ(tb[0].compute_ns, 300'000);
  EXPECT_EQ(tb[0].non_compute_ns, 160'000);
  EXPECT_EQ(tb[1].kernel_ns, 382'000);
  EXPECT_EQ(tb[1].idle_ns, 30'000);
  EXPECT_EQ(tb[1].non_compute_ns, 52'000);
}

TEST(KinetoImport, GzipDirectoryEqualsPlain) {
  auto plain = import_kineto(kFixtures + "/kineto_multirank");
  auto gz = import_trace(kFixtures + "/kineto_multirank_gz");
  ASSERT_TRUE(plain.ok() && gz.ok()) << gz.error_text();
  EXPECT_EQ(plain->timeline.names, gz->timeline.names);
  ASSERT_EQ(plain->timeline.tracks.size(), gz->timeline.tracks.size());
  for (std::size_t i = 0; i < plain->timeline.tracks.size(); ++i) {
    const auto& a = plain->timeline.tracks[i].spans;
    const auto& b = gz->timeline.tracks[i].spans;
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t j = 0; j < a.size(); ++j) {
      EXPECT_EQ(a[j].start_ns, b[j].start_ns);
      EXPECT_EQ(a[j].duration_ns, b[j].duration_ns);
      EXPECT_EQ(a[j].name_id, b[j].name_id);
    }
  }
}

TEST(KinetoImport, Legacy2021Format) {
  auto r = import_trace(kFixtures + "/kineto_legacy_2021.json");
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_EQ(r->ranks.size(), 1u);
  EXPECT_EQ(r->ranks[0].time_base, TimeBase::epoch);  // integer epoch µs, no base time
  EXPECT_EQ(r->ranks[0].device_name, "Tesla V100-DGXS-32GB");
  const auto& t = r->timeline;
  const auto* k = find_track(t, 0, Lane::compute, 7);  // tid "stream 7" and args.stream 7
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->spans.size(), 2u);
  EXPECT_EQ(k->spans[0].start_ns, 1'623'142'623'460'200'000);
  EXPECT_TRUE(k->spans[0].tensor_core);  // volta s884 GEMM
  const auto* copy = find_track(t, 0, Lane::copy, 7);
  ASSERT_NE(copy, nullptr);
  ASSERT_EQ(copy->spans.size(), 2u);
  EXPECT_EQ(copy->spans[0].kind, SpanKind::memset);
  EXPECT_EQ(copy->spans[1].kind, SpanKind::memcpy);
  EXPECT_DOUBLE_EQ(copy->spans[1].bytes, 19267584);
  const auto* host = find_track(t, 0, Lane::host, 25738);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->spans.size(), 2u);  // two Operator spans; the Runtime one is off by default
  KinetoImportOptions o;
  o.include_runtime = true;
  o.include_cpu_ops = false;
  auto with_runtime = import_kineto_file(kFixtures + "/kineto_legacy_2021.json", o);
  ASSERT_TRUE(with_runtime.ok());
  EXPECT_EQ(find_track(with_runtime->timeline, 0, Lane::host, 25738)->spans.size(), 1u);
}

TEST(KinetoImport, JsonArrayFormatAndRelativeClock) {
  auto r = import_kineto_bytes(
      R"([{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":2,"args":{"stream":7,"device":0}}])");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->ranks[0].time_base, TimeBase::relative);
  EXPECT_EQ(r->timeline.tracks.at(0).spans.at(0).start_ns, 5'000);
}

TEST(KinetoImport, SingleProcessSeveralGpusMakesDeviceRanks) {
  auto r = import_kineto_bytes(R"({"traceEvents":[
      {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":1,"dur":1},
      {"ph":"X","cat":"kernel","name":"b","pid":3,"tid":7,"ts":1,"dur":1}]})");
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_EQ(r->ranks.size(), 2u);
  EXPECT_EQ(r->ranks[1].rank, 3);
  EXPECT_EQ(r->warnings.size(), 1u);
}

TEST(KinetoImport, TruncatedFileFailsWithOffsetAndNothingPartial) {
  const std::string full = read_file(kFixtures + "/kineto_multirank/rank0.json");
  for (std::size_t cut : {full.size() / 3, full.size() / 2, full.size() - 3}) {
    auto r = import_kineto_bytes(std::string_view(full).substr(0, cut), {}, "rank0.json");
    ASSERT_FALSE(r.ok()) << "cut at " << cut;
    const std::string text = r.error_text();
    EXPECT_NE(text.find("rank0.json: invalid JSON at byte "), std::string::npos) << text;
    EXPECT_NE(text.find("unexpected end of input"), std::string::npos) << text;
  }
  auto bad = import_kineto_bytes(R"({"traceEvents": [{"ph": "X", "ts": 1,, }]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error_text().find("at byte 37: expected a string key"), std::string::npos) << bad.error_text();
  auto wrong = import_kineto_bytes(R"({"traceEvents": {"ph": "X"}})");
  EXPECT_NE(wrong.error_text().find("\"traceEvents\" must be an array"), std::string::npos);
}

TEST(KinetoImport, DirectoryErrors) {
  auto none = import_kineto_directory(kFixtures + "/no_such_dir");
  EXPECT_FALSE(none.ok());
  auto empty = import_kineto_directory(kFixtures + "/kineto_multirank/..//kineto_multirank_gz/..");
  // The fixture root holds only the legacy JSON as a trace file: one rank.
  ASSERT_TRUE(empty.ok()) << empty.error_text();
  EXPECT_EQ(empty->ranks.size(), 1u);
}

TEST(TraceImport, DetectsFormatByContent) {
  EXPECT_EQ(detect_trace_format(kFixtures + "/kineto_multirank"), TraceFormat::kineto_directory);
  EXPECT_EQ(detect_trace_format(kFixtures + "/kineto_multirank_gz/rank0.json.gz"), TraceFormat::kineto_json);
  EXPECT_EQ(detect_trace_format(kFixtures + "/kineto_legacy_2021.json"), TraceFormat::kineto_json);
  EXPECT_EQ(detect_trace_format(kFixtures + "/nsys_schema3.sql"), TraceFormat::unknown);
  auto r = import_trace(kFixtures + "/nsys_schema3.sql");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error_text().find("not a recognised trace"), std::string::npos);
}

// Plansight's own timeline JSON (plansight timeline --out) is recognised, streamed or dumped with
// indentation, and refused with what import takes, instead of read as a trace with no events.
TEST(TraceImport, APlansightTimelineIsNamedNotImported) {
  estimator::Timeline t;
  t.names = {"F0.0"};
  t.tracks.push_back({0, estimator::Lane::compute, -1, "rank 0 compute", {}});
  t.tracks[0].spans.push_back(estimator::Span{});
  const std::string streamed = testing::TempDir() + "/plansight_timeline.json";
  const std::string indented = testing::TempDir() + "/plansight_timeline_indented.json";
  {
    std::ofstream out(streamed);
    estimator::write_json(out, t);
  }
  {
    std::ofstream out(indented);
    out << "\n  " << estimator::to_json(t).dump(2);
  }
  for (const std::string& path : {streamed, indented}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(detect_trace_format(path), TraceFormat::plansight_timeline);
    auto r = import_trace(path);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error_text().find("a Plansight timeline"), std::string::npos) << r.error_text();
    EXPECT_NE(r.error_text().find("--format perfetto"), std::string::npos) << r.error_text();
  }
  // Another "format" value, or the member not first, is still read as Kineto JSON.
  const std::string other = testing::TempDir() + "/other_format.json";
  for (const char* text : {R"({"traceEvents": [], "format": "plansight-timeline"})", R"({"format": "plansight-run"})"}) {
    {
      std::ofstream out(other);
      out << text;
    }
    EXPECT_EQ(detect_trace_format(other), TraceFormat::kineto_json) << text;
  }
}

}  // namespace
}  // namespace plansight::interop

namespace plansight::interop {
namespace {

// Holistic Trace Analysis's load-time filter (hta/common/trace.py, _filter_irrelevant_gpu_kernels):
// with two or more ProfilerStep# annotations, host events from the start of the last step on and
// device work launched there (or launched by no runtime call in the trace) are dropped. Times in
// microseconds; the last step starts at 100.
constexpr const char* kTwoSteps = R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 120, "dur": 5},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 90, "dur": 2, "args": {"correlation": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 130, "dur": 2, "args": {"correlation": 8}},
  {"ph": "X", "cat": "kernel", "name": "gemm_launched_before", "pid": 0, "tid": 7, "ts": 95, "dur": 40, "args": {"correlation": 7, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm_launched_in_last_step", "pid": 0, "tid": 7, "ts": 140, "dur": 10, "args": {"correlation": 8, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 9, "ts": 20, "dur": 10, "args": {"device": 0, "stream": 9}}
]})";

std::vector<std::string> span_names(const ImportedTrace& t) {
  std::vector<std::string> out;
  for (const auto& track : t.timeline.tracks) {
    for (const auto& s : track.spans) out.push_back(t.timeline.names[static_cast<std::size_t>(s.name_id)]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(KinetoImport, DropsTheLastProfilerStepAsHtaDoes) {
  KinetoImportOptions options;
  auto whole = import_kineto_bytes(kTwoSteps, options);
  ASSERT_TRUE(whole.ok()) << whole.error_text();
  EXPECT_EQ(span_names(*whole).size(), 7u);  // runtime calls are not imported by default
  EXPECT_EQ(whole->collectives.size(), 1u);

  options.drop_last_profiler_step = true;
  auto trimmed = import_kineto_bytes(kTwoSteps, options);
  ASSERT_TRUE(trimmed.ok()) << trimmed.error_text();
  // Kept: the first step's annotation and op, and the kernel launched before the last step
  // although it runs into it. Dropped: the last step's annotation and op, the kernel launched
  // in it, and the NCCL kernel whose launch is not in the trace (HTA cannot place it either).
  EXPECT_EQ(span_names(*trimmed), (std::vector<std::string>{"ProfilerStep#1", "aten::mm", "gemm_launched_before"}));
  EXPECT_TRUE(trimmed->collectives.empty());
  bool said = false;
  for (const auto& w : trimmed->warnings) said = said || w.message.find("dropped the last profiler step") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(KinetoImport, OneProfilerStepIsKeptWhole) {
  const std::string one = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 50, "dur": 10, "args": {"device": 0, "stream": 7}}
  ]})";
  KinetoImportOptions options;
  options.drop_last_profiler_step = true;
  auto t = import_kineto_bytes(one, options);
  ASSERT_TRUE(t.ok()) << t.error_text();
  EXPECT_EQ(span_names(*t), (std::vector<std::string>{"ProfilerStep#3", "gemm"}));
  bool said = false;
  for (const auto& w : t->warnings) said = said || w.message.find("fewer than two ProfilerStep#") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace plansight::interop
