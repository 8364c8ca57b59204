// The probe protocol's schema (probe/protocol): every event written and read back equal, floats
// bit for bit; lenient about what it does not know, strict about what it does; exit codes from
// error kinds.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "plansight/probe/protocol/events.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

ProbeResult sample_result() {
  ProbeResult r;
  r.device = "cpu: AMD EPYC 7B13 (2 threads)";
  r.ranks_share_device = true;
  r.steps = {{1, 5.5451774444795623, 0.1 + 0.2, 0, false},
             {2, std::numeric_limits<double>::quiet_NaN(), 1e-300, 65536, true}};
  r.step_time_s = 0.012345678901234567;
  r.timeline.source = est::TimelineSource::measured;
  r.timeline.title = "probe step";
  est::Track track;
  track.rank = 1;
  track.lane = est::Lane::communication;
  track.label = "rank 1 comm";
  est::Span span;
  span.start_ns = 17;
  span.duration_ns = 1234567;
  span.bytes = 4096;
  span.name_id = r.timeline.intern("all-reduce tp");
  span.stage = 0;
  span.micro_batch = 3;
  span.kind = est::SpanKind::collective;
  span.phase = est::Phase::forward;
  track.spans.push_back(span);
  r.timeline.tracks.push_back(track);
  RankMemory m;
  m.rank = 1;
  m.current.weights_bytes = 1.0 / 3.0;
  m.peak.activations_bytes = 123456789.0;
  m.peak_total_bytes = 987654321.0;
  r.memory = {m};
  est::HardwareProfile p;
  p.device = r.device;
  p.peak_flops = 1.5e11;
  p.memory_bandwidth_bytes_per_s = 2e10;
  p.gemms.push_back({128, 256, 64, 1, est::Precision::fp32, 3.25e-5});
  r.profile = p;
  r.stopped_early = true;
  r.device_report = {{"tensor_cores", {{"step", {{"share", 0.75}}}}}};
  return r;
}

StartedEvent sample_started() {
  StartedEvent s;
  s.pid = 4242;
  s.device = "cpu: AMD EPYC 7B13 (2 threads)";
  s.world_size = 4;
  auto request = probe_request_from_json({{"model", "small"}, {"layout", {{"tp", 2}, {"dp", 2}, {"zero_stage", 1}}}, {"steps", 3}});
  EXPECT_TRUE(request) << request.error_text();
  s.request = *request;
  s.launch = LaunchReport{"mpirun", 2, {{0, "node-a", 100}, {1, "node-b", 200}}, "mpi: Open MPI v4.1.4"};
  return s;
}

std::vector<Event> every_event() {
  return {sample_started(),
          ProgressEvent{2, 3, std::numeric_limits<double>::quiet_NaN(), 1.25, 0.625},
          CalibratingEvent{"quick"},
          ResultEvent{sample_result()},
          DoneEvent{130, true},
          ErrorEvent{ErrorKind::bad_request, {make_error("layout.tp", "value 3 does not divide heads 4")}}};
}

TEST(ProbeProtocol, EveryEventReadsBackAsItWasWritten) {
  for (const Event& event : every_event()) {
    const std::string line = write_event(event);
    EXPECT_EQ(line.find('\n'), std::string::npos) << "one event, one line";
    const EventLine read = read_event_line(line);
    ASSERT_EQ(read.kind, EventLine::Kind::event) << line << "\n" << join_messages(read.errors);
    EXPECT_EQ(read.name, event_name(event));
    EXPECT_EQ(read.event->index(), event.index());
    EXPECT_EQ(to_json(*read.event), to_json(event)) << line;
  }
}

TEST(ProbeProtocol, TheResultRoundTripsExactly) {
  const ProbeResult written = sample_result();
  const auto read = probe_result_from_json(to_json(written));
  ASSERT_TRUE(read) << read.error_text();
  ASSERT_EQ(read->steps.size(), 2u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(read->steps[0].seconds), std::bit_cast<std::uint64_t>(0.1 + 0.2));
  EXPECT_EQ(read->steps[1].seconds, 1e-300);
  EXPECT_TRUE(std::isnan(read->steps[1].loss)) << "a diverged step stays diverged (null on the wire)";
  EXPECT_EQ(read->steps[1].loss_scale, 65536);
  EXPECT_TRUE(read->steps[1].skipped);
  EXPECT_EQ(read->step_time_s, written.step_time_s);
  EXPECT_EQ(read->memory.at(0).current.weights_bytes, 1.0 / 3.0);
  EXPECT_EQ(read->memory.at(0).peak.activations_bytes, 123456789.0);
  ASSERT_EQ(read->timeline.tracks.size(), 1u);
  const auto& span = read->timeline.tracks[0].spans.at(0);
  EXPECT_EQ(span.duration_ns, 1234567);
  EXPECT_EQ(read->timeline.name_of(span), "all-reduce tp");
  EXPECT_EQ(span.phase, est::Phase::forward);
  ASSERT_TRUE(read->profile);
  EXPECT_EQ(read->profile->gemms.at(0).seconds, 3.25e-5);
  EXPECT_EQ(read->device_report["tensor_cores"]["step"]["share"], 0.75);
  EXPECT_TRUE(read->stopped_early);
}

TEST(ProbeProtocol, StepSecondsFallsBackToTheMedianOfTheStepsMade) {
  ProbeResult r;
  EXPECT_EQ(step_seconds(r), 0);
  r.steps = {{1, 1, 0.3, 0, false}, {2, 1, 0.1, 0, false}, {3, 1, 0.2, 0, false}, {4, 1, 0.4, 0, false}};
  EXPECT_DOUBLE_EQ(step_seconds(r), 0.25);
  r.step_time_s = 0.5;
  EXPECT_EQ(step_seconds(r), 0.5);
}

TEST(ProbeProtocol, UnknownKindsAndKeysAreSkippedStrayLinesAreKept) {
  EXPECT_EQ(read_event_line(R"({"event":"heartbeat","t":1})").kind, EventLine::Kind::unknown_event);
  EXPECT_EQ(read_event_line(R"({"event":"heartbeat"})").name, "heartbeat");
  const auto progress = read_event_line(R"({"event":"progress","step":1,"steps":2,"loss":3.5,"elapsed_s":1,"eta_s":1,"gpu_temp_c":61})");
  ASSERT_EQ(progress.kind, EventLine::Kind::event) << join_messages(progress.errors);
  EXPECT_EQ(std::get<ProgressEvent>(*progress.event).loss, 3.5);
  for (const char* stray : {"", "NCCL INFO Bootstrap", "[1,2]", R"({"step":1})", R"({"event":7})"}) {
    EXPECT_EQ(read_event_line(stray).kind, EventLine::Kind::not_an_event) << stray;
  }
}

TEST(ProbeProtocol, AKnownEventThatBreaksTheSchemaNamesTheField) {
  auto named = [](const char* line, const std::string& field) {
    const EventLine read = read_event_line(line);
    EXPECT_EQ(read.kind, EventLine::Kind::malformed) << line;
    bool found = false;
    for (const auto& e : read.errors) found = found || e.field == field;
    EXPECT_TRUE(found) << line << " -> " << join_messages(read.errors);
  };
  named(R"({"event":"progress","step":"three","steps":3})", "progress.step");
  named(R"({"event":"progress","steps":3})", "progress.step");
  named(R"({"event":"started","protocol":1,"device":"cpu","world_size":1})", "started.request");
  named(R"({"event":"started","protocol":1,"device":"cpu","world_size":1,"request":{"layout":{"tp":3}}})", "started.request.layout.tp");
  named(R"({"event":"started","protocol":2,"device":"cpu","world_size":1,"request":{}})", "started.protocol");
  named(R"({"event":"done"})", "done.exit_code");
  named(R"({"event":"error","kind":"oops","errors":[],"exit_code":1})", "error.kind");
  named(R"({"event":"error","errors":[3],"exit_code":1})", "error.errors[0]");
  named(R"({"event":"result","device":"cpu","steps":[],"step_time_s":0,"stopped_early":false,
            "memory":[{"rank":0,"peak":{"weights_bytes":"lots"}}]})", "result.memory[0].peak.weights_bytes");
  named(R"({"event":"result","device":"cpu","steps":[],"stopped_early":false,"memory":[]})", "result.step_time_s");
}

TEST(ProbeProtocol, ExitCodesComeFromErrorKinds) {
  EXPECT_EQ(exit_code(ErrorKind::bad_request), 2);
  EXPECT_EQ(exit_code(ErrorKind::failed), 1);
  EXPECT_EQ(exit_code(ErrorKind::stopped), 130);
  for (ErrorKind kind : {ErrorKind::bad_request, ErrorKind::failed, ErrorKind::stopped}) {
    const auto written = to_json(Event(ErrorEvent{kind, {make_error("probe", "x")}}));
    EXPECT_EQ(written["exit_code"], exit_code(kind));
    EXPECT_EQ(written["kind"], to_string(kind));
  }
  // A probe from before "kind" said it by the exit code alone.
  auto old = read_event_line(R"({"event":"error","errors":[{"field":"layout.tp","message":"m"}],"exit_code":2})");
  ASSERT_EQ(old.kind, EventLine::Kind::event);
  EXPECT_EQ(std::get<ErrorEvent>(*old.event).kind, ErrorKind::bad_request);
  EXPECT_EQ(std::get<ErrorEvent>(*old.event).errors.at(0).field, "layout.tp");
  old = read_event_line(R"({"event":"error","errors":[],"exit_code":130})");
  EXPECT_EQ(std::get<ErrorEvent>(*old.event).kind, ErrorKind::stopped);
}

}  // namespace
}  // namespace plansight::probe
