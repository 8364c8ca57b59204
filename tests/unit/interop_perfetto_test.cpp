// Chrome/Perfetto trace export: a well-formed JSON document, only known "ph" values with their
// required fields, named processes and threads, predicted and measured on separate threads, no
// partially overlapping slices on any thread, and p2p flow arrows for pipeline send/recv.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plansight/interop/kineto_importer.h"
#include "plansight/interop/perfetto_exporter.h"

namespace plansight::interop {
namespace {

using estimator::Lane;
using estimator::Phase;
using estimator::Span;
using estimator::SpanKind;
using estimator::Timeline;

Span span(Timeline& t, const std::string& name, std::int64_t start, std::int64_t dur, SpanKind kind = SpanKind::kernel) {
  Span s;
  s.name_id = t.intern(name);
  s.start_ns = start;
  s.duration_ns = dur;
  s.kind = kind;
  return s;
}

// Two pipeline stages with a forward send/recv pair, plus spans that overlap partially on one
// track (as measured kernels on one stream sometimes do by a few ns).
Timeline predicted() {
  Timeline t;
  t.source = estimator::TimelineSource::predicted;
  estimator::Track s0{0, Lane::compute, 0, "stage 0", {}};
  auto f = span(t, "forward mb0", 0, 1000);
  f.stage = 0, f.micro_batch = 0, f.phase = Phase::forward;
  s0.spans.push_back(f);
  s0.spans.push_back(span(t, "inner", 100, 200));
  s0.spans.push_back(span(t, "partial", 900, 300));  // 900..1200 overlaps 0..1000 partially
  s0.spans.push_back(span(t, "name with \"quotes\", \\ and \x01 and bad utf8 \xff", 1300, 10));
  estimator::Track p0{0, Lane::communication, 0, "p2p", {}};
  auto snd = span(t, "send activations", 1000, 50, SpanKind::send);
  snd.stage = 0, snd.micro_batch = 0, snd.phase = Phase::forward;
  p0.spans.push_back(snd);
  estimator::Track p1{1, Lane::communication, 0, "p2p", {}};
  auto rcv = span(t, "recv activations", 1000, 60, SpanKind::recv);
  rcv.stage = 1, rcv.micro_batch = 0, rcv.phase = Phase::forward;
  p1.spans.push_back(rcv);
  estimator::Track s1{1, Lane::compute, 0, "stage 1", {}};
  auto f1 = span(t, "forward mb0", 1060, 1000);
  f1.stage = 1, f1.micro_batch = 0, f1.phase = Phase::forward, f1.flops = 1e12, f1.tensor_core = true;
  s1.spans.push_back(f1);
  t.tracks = {s0, p0, p1, s1};
  return t;
}

Timeline measured() {
  Timeline t = predicted();
  t.source = estimator::TimelineSource::measured;
  for (auto& tr : t.tracks) {
    for (auto& s : tr.spans) s.start_ns += 1'700'000'000'000'000'000 + 77;
  }
  t.tracks[3].spans[0].cpu_ns = 750;  // the CPU probe's thread clock: 0.75 of a 1 us span
  t.tracks[3].spans[0].operator_id = t.intern("fc1");  // a GPU kernel's operator (its NVTX range)
  return t;
}

void check_well_formed(const nlohmann::json& doc) {
  ASSERT_TRUE(doc.is_object());
  ASSERT_TRUE(doc.contains("traceEvents") && doc["traceEvents"].is_array());
  // Per (pid, tid): slices sorted by start must be nested or disjoint.
  std::map<std::pair<long, long>, std::vector<std::pair<double, double>>> slices;
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
    const std::string ph = e["ph"];
    ASSERT_TRUE(ph == "X" || ph == "M" || ph == "s" || ph == "f") << ph;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e.dump();
    if (ph == "M") {
      ASSERT_TRUE(e.contains("args")) << e.dump();
      continue;
    }
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e.dump();
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number() && e["dur"].get<double>() >= 0) << e.dump();
      slices[{e["pid"], e["tid"]}].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    } else {
      ASSERT_TRUE(e.contains("id") && e.contains("cat")) << e.dump();
    }
  }
  for (auto& [thread, v] : slices) {
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<double> open;
    for (const auto& [b, e] : v) {
      while (!open.empty() && open.back() <= b) open.pop_back();
      ASSERT_TRUE(open.empty() || e <= open.back() + 1e-9)
          << "partial overlap on pid " << thread.first << " tid " << thread.second << " at " << b;
      open.push_back(e);
    }
  }
}

TEST(PerfettoExport, WellFormedWithSeparateTracksAndFlows) {
  const Timeline p = predicted(), m = measured();
  const std::string text = chrome_trace_json({&p, &m});
  const auto doc = nlohmann::json::parse(text);
  check_well_formed(doc);

  std::set<std::string> processes, threads;
  int flows_s = 0, flows_f = 0, overflow_threads = 0;
  double partial_ts = -1, measured_first_ts = -1;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"]);
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      const std::string n = e["args"]["name"];
      threads.insert(n);
      if (n.find(" #2") != std::string::npos) ++overflow_threads;
    }
    if (e["ph"] == "s") ++flows_s;
    if (e["ph"] == "f") {
      ++flows_f;
      EXPECT_EQ(e["bp"], "e");
    }
    if (e["ph"] == "X" && e["name"] == "partial") partial_ts = e["ts"];
    if (e["ph"] == "X" && e["name"] == "forward mb0" && measured_first_ts < 0 && e["ts"] == 0.0) measured_first_ts = 0;
  }
  EXPECT_EQ(processes, (std::set<std::string>{"rank 0", "rank 1"}));
  EXPECT_TRUE(threads.count("predicted: compute \xC2\xB7 stage 0"));
  EXPECT_TRUE(threads.count("measured: compute \xC2\xB7 stage 0"));
  EXPECT_EQ(overflow_threads, 2);  // the partial span moved aside, in both timelines
  EXPECT_EQ(flows_s, 2);           // one send->recv pair per timeline
  EXPECT_EQ(flows_f, 2);
  EXPECT_DOUBLE_EQ(partial_ts, 0.9);  // 900 ns, per-timeline origin: both start at 0
  EXPECT_NE(text.find("\\\"quotes\\\", \\\\ and \\u0001 and bad utf8 \xEF\xBF\xBD"), std::string::npos);
  EXPECT_NE(text.find("\"tensor_core\":true"), std::string::npos);
  EXPECT_NE(text.find("\"cpu_us\":0.75"), std::string::npos) << "a measured span's thread CPU time, in us";
  EXPECT_EQ(text.find("\"cpu_us\":0.75", text.find("\"cpu_us\":0.75") + 1), std::string::npos) << "the predicted twin has none";
  EXPECT_NE(text.find("\"operator\":\"fc1\""), std::string::npos) << "the operator beside the kernel's name";
  EXPECT_EQ(text.find("\"operator\":", text.find("\"operator\":") + 1), std::string::npos) << "only the span with one";
}

TEST(PerfettoExport, TimestampsAreExactDecimalMicroseconds) {
  const Timeline m = measured();
  ChromeTraceOptions o;
  o.origin = TimeOrigin::absolute;
  o.flows = false;
  const std::string text = chrome_trace_json({&m}, o);
  EXPECT_NE(text.find("\"ts\":1700000000000000.077"), std::string::npos);
  EXPECT_EQ(text.find("\"ph\":\"s\""), std::string::npos);
  check_well_formed(nlohmann::json::parse(text));
}

TEST(PerfettoExport, ImportedFixtureExportsWellFormed) {
  auto r = import_kineto(std::string(PLANSIGHT_TRACE_FIXTURE_DIR) + "/kineto_multirank");
  ASSERT_TRUE(r.ok()) << r.error_text();
  const auto path = std::filesystem::path(::testing::TempDir()) / ("export." + std::to_string(::getpid()) + ".json");
  auto written = write_chrome_trace_file(path, {&r->timeline});
  ASSERT_TRUE(written.ok()) << written.error_text();
  EXPECT_GT(*written, 1000);
  std::ifstream f(path);
  const auto doc = nlohmann::json::parse(f);
  check_well_formed(doc);
  EXPECT_FALSE(write_chrome_trace_file("/nonexistent/dir/x.json", {&r->timeline}).ok());
}

}  // namespace
}  // namespace plansight::interop
