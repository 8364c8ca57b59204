// plansight-probe and `plansight probe --launcher` under mpirun (Open MPI over loopback,
// oversubscribed): the JSON-lines stream of a launched run comes from rank 0 with every rank's
// timeline, aligned; a rank that fails or is killed ends every process within seconds and the
// CLI stores the run as failed; a run stopped with SIGUSR1 keeps what it measured; a launched
// run is compared with its prediction like a threaded run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <map>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "plansight/core/child_process.h"
#include "plansight/store/store.h"

namespace plansight::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Output {
  int exit_code = -1;
  std::vector<nlohmann::json> events;
  std::string stdout_text, stderr_text;
  double seconds = 0;
  double seconds_after_kill = -1;
};

// `mpirun -np N plansight-probe ARGS` with `input` on stdin. `on_event` may ask to stop
// (SIGUSR1, forwarded by mpirun to every process) by returning true.
Output mpirun(int processes, std::vector<std::string> args, const std::string& input,
              const std::function<bool(const nlohmann::json&, Output&)>& on_event = {}) {
  std::vector<std::string> argv = {"-np", std::to_string(processes), PLANSIGHT_PROBE_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  Output o;
  std::atomic<bool> stop{false};
  core::ChildOptions options;
  options.own_process_group = true;
  options.interrupt_signal = SIGUSR1;
  const auto start = Clock::now();
  auto exit = core::run_child(PLANSIGHT_MPIEXEC, argv, input, [&](std::string_view line) {
    o.stdout_text += std::string(line) + "\n";
    auto j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    o.events.push_back(j);
    if (on_event && j.is_object() && on_event(j, o)) stop = true;
  }, &stop, options);
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(exit.ok()) << exit.error_text();
  if (exit) {
    o.exit_code = exit->exit_code;
    o.stderr_text = exit->stderr_text;
  }
  return o;
}

const nlohmann::json* find_event(const Output& o, const std::string& kind) {
  for (const auto& e : o.events) if (e.is_object() && e.value("event", "") == kind) return &e;
  return nullptr;
}

std::vector<long long> pids_of(const Output& o) {
  std::vector<long long> pids;
  if (const auto* started = find_event(o, "started")) {
    for (const auto& r : (*started)["launch"]["ranks"]) pids.push_back(r["pid"].get<long long>());
  }
  return pids;
}

// Running: the process exists and is not a zombie (a container without an init process may
// leave the launcher's exited children unreaped; they run nothing).
bool alive(long long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!stat || !std::getline(stat, text)) return false;
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z' && text[paren + 2] != 'X';
}

// Gone within `seconds`: the launcher's exit may precede its processes' last moments by a little.
bool gone_within(long long pid, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (alive(pid)) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class ProbeMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    // Open MPI refuses root without these (CI runs as root) and more processes than cores
    // without oversubscription.
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    ::setenv("PLANSIGHT_PROBE", PLANSIGHT_PROBE_EXE, 1);
    db_ = (std::filesystem::temp_directory_path() /
           ("plansight_probe_mpi_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".sqlite"))
              .string();
    std::filesystem::remove(db_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + suffix);
  }
  Output cli(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(db_);
    Output o;
    auto exit = core::run_child(PLANSIGHT_CLI_EXE, args, "", [&](std::string_view line) { o.stdout_text += std::string(line) + "\n"; });
    EXPECT_TRUE(exit.ok());
    if (exit) {
      o.exit_code = exit->exit_code;
      o.stderr_text = exit->stderr_text;
    }
    return o;
  }
  std::string db_;
};

TEST_F(ProbeMpi, RankZeroWritesOneStreamWithEveryRankAligned) {
  auto o = mpirun(4, {"-"}, R"({"model": "tiny", "layout": {"tp": 2, "dp": 2}, "steps": 3})");
  ASSERT_EQ(o.exit_code, 0) << o.stderr_text << o.stdout_text;
  int started = 0, results = 0;
  for (const auto& e : o.events) {
    ASSERT_FALSE(e.is_discarded()) << "every line is JSON:\n" << o.stdout_text;
    started += e["event"] == "started";
    results += e["event"] == "result";
  }
  EXPECT_EQ(started, 1) << "only rank 0 writes";
  EXPECT_EQ(results, 1);
  const auto& started_event = *find_event(o, "started");
  EXPECT_EQ(started_event["launch"]["launcher"], "mpirun");
  EXPECT_EQ(started_event["launch"]["processes"], 4);
  const auto& result = *find_event(o, "result");
  const auto& launch = result["device_report"]["launch"];
  EXPECT_EQ(launch["processes"], 4);
  EXPECT_EQ(launch["communicator"].get<std::string>().rfind("mpi: ", 0), 0u) << launch;
  const auto& clock = result["device_report"]["clock"];
  ASSERT_EQ(clock["offsets_ns"].size(), 4u);
  // One host: every process reads the same CLOCK_MONOTONIC, so no offset is applied (a measured
  // one would only add its error: half a round trip, milliseconds on a loaded machine) and the
  // alignment has no error; the measured offsets are still reported, each with its round trip.
  EXPECT_EQ(clock["error_bound_ns"].get<double>(), 0.0);
  ASSERT_EQ(clock["applied_offsets_ns"].size(), 4u);
  for (const auto& off : clock["applied_offsets_ns"]) EXPECT_EQ(off.get<double>(), 0.0);
  for (std::size_t p = 1; p < 4; ++p) {
    EXPECT_LE(std::fabs(clock["offsets_ns"][p].get<double>()), clock["round_trip_ns"][p].get<double>()) << "process " << p;
  }
  // Memory of every rank.
  ASSERT_EQ(result["memory"].size(), 4u);
  for (int r = 0; r < 4; ++r) EXPECT_GT(result["memory"][r]["peak_total_bytes"].get<double>(), 0) << "rank " << r;

  // Every rank's compute and communication lanes; a TP all-reduce ends when its last member
  // arrives, so the k-th one of rank 0 and of its TP peer rank 1 overlap in time when the
  // clocks are aligned.
  const auto& timeline = result["timeline"];
  std::map<int, std::set<std::string>> lanes;
  std::map<int, std::vector<std::pair<double, double>>> tp_reduces;
  const auto& names = timeline["names"];
  for (const auto& track : timeline["tracks"]) {
    const int rank = track["rank"].get<int>();
    lanes[rank].insert(track["lane"].get<std::string>());
    for (const auto& span : track["spans"]) {  // [start_ns, duration_ns, name_id, ...] (timeline_json.cpp)
      const double start = span[0].get<double>();
      EXPECT_GE(start, 0);
      if (names[span[2].get<std::size_t>()] == "tp.all_reduce") tp_reduces[rank].push_back({start, start + span[1].get<double>()});
    }
  }
  ASSERT_EQ(lanes.size(), 4u) << "a track for every rank";
  for (const auto& [rank, l] : lanes) {
    EXPECT_TRUE(l.count("compute")) << "rank " << rank;
    EXPECT_TRUE(l.count("communication")) << "rank " << rank;
  }
  ASSERT_FALSE(tp_reduces[0].empty());
  ASSERT_EQ(tp_reduces[0].size(), tp_reduces[1].size());
  for (auto& [rank, spans] : tp_reduces) std::sort(spans.begin(), spans.end());
  // Causality: a member's all-reduce cannot end before its peer's began. The slack covers only the
  // tracer's timestamps on either side of the call.
  constexpr double kSlackNs = 200e3;
  for (std::size_t k = 0; k < tp_reduces[0].size(); ++k) {
    const auto [a0, a1] = tp_reduces[0][k];
    const auto [b0, b1] = tp_reduces[1][k];
    EXPECT_LE(a0, b1 + kSlackNs) << "all-reduce " << k;
    EXPECT_LE(b0, a1 + kSlackNs) << "all-reduce " << k;
  }
}

TEST_F(ProbeMpi, FailingRankEndsEveryProcessWithItsError) {
  auto o = mpirun(4, {"-", "--inject-failure", "2:2"}, R"({"model": "tiny", "layout": {"tp": 2, "dp": 2}, "steps": 50})");
  EXPECT_EQ(o.exit_code, 1) << o.stderr_text;
  EXPECT_LT(o.seconds, 30.0);
  const auto* error = find_event(o, "error");
  ASSERT_NE(error, nullptr) << o.stdout_text;
  EXPECT_EQ((*error)["errors"][0]["message"], "rank 2: injected failure") << (*error);
  EXPECT_EQ(find_event(o, "result"), nullptr);
  const auto pids = pids_of(o);
  ASSERT_EQ(pids.size(), 4u);
  for (auto pid : pids) EXPECT_TRUE(gone_within(pid, 5)) << "pid " << pid << " is still running";

  // Two rank threads in each of two processes: the failure of a thread of the second process
  // ends the threads of both.
  auto threads = mpirun(2, {"-", "--inject-failure", "3:2"}, R"({"model": "tiny", "layout": {"tp": 2, "dp": 2}, "steps": 50})");
  EXPECT_EQ(threads.exit_code, 1) << threads.stderr_text;
  EXPECT_LT(threads.seconds, 30.0);
  const auto* thread_error = find_event(threads, "error");
  ASSERT_NE(thread_error, nullptr) << threads.stdout_text;
  EXPECT_EQ((*thread_error)["errors"][0]["message"], "rank 3: injected failure") << (*thread_error);
}

TEST_F(ProbeMpi, KilledRankEndsTheRunWithinSeconds) {
  Clock::time_point killed_at;
  auto o = mpirun(2, {"-"}, R"({"model": "tiny", "layout": {"dp": 2}, "steps": 100000})",
                  [&](const nlohmann::json& e, Output& out) {
                    if (e["event"] == "progress" && e["step"] == 2) {
                      const auto pids = pids_of(out);
                      if (pids.size() == 2) ::kill(static_cast<pid_t>(pids[1]), SIGKILL);
                      killed_at = Clock::now();
                    }
                    return false;
                  });
  ASSERT_NE(killed_at, Clock::time_point{}) << o.stdout_text.substr(0, 2000) << o.stderr_text;
  const double after_kill = std::chrono::duration<double>(Clock::now() - killed_at).count();
  EXPECT_LT(after_kill, 20.0);
  EXPECT_NE(o.exit_code, 0);
  EXPECT_EQ(find_event(o, "result"), nullptr);
  for (auto pid : pids_of(o)) EXPECT_TRUE(gone_within(pid, 5)) << "pid " << pid << " is still running";
}

TEST_F(ProbeMpi, StopSignalKeepsWhatWasMeasured) {
  auto o = mpirun(2, {"-"}, R"({"model": "tiny", "layout": {"dp": 2}, "steps": 100000})",
                  [](const nlohmann::json& e, Output&) { return e["event"] == "progress" && e["step"] == 3; });
  EXPECT_EQ(o.exit_code, 130) << o.stderr_text;
  const auto* result = find_event(o, "result");
  ASSERT_NE(result, nullptr) << o.stdout_text.substr(0, 2000) << o.stderr_text;
  EXPECT_TRUE((*result)["stopped_early"].get<bool>());
  EXPECT_GE((*result)["steps"].size(), 3u);
  EXPECT_LT((*result)["steps"].size(), 5000u);
}

// `--device cuda` under a launcher: with a GPU for every process, each trains on its own with
// NCCL between them and the fp32 losses equal the CPU's; without, an error on "device" naming
// the rank that has none, and `auto` trains on the CPU everywhere.
TEST_F(ProbeMpi, GpusPerProcessOrAReasonAndAutoFallsBack) {
  const std::string request = R"({"model": "tiny", "layout": {"dp": 2}, "steps": 2})";
  auto cpu = mpirun(2, {"-", "--device", "cpu"}, request);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.stderr_text;
  auto cuda = mpirun(2, {"-", "--device", "cuda"}, request);
  if (cuda.exit_code == 0) {
    const auto& result = *find_event(cuda, "result");
    EXPECT_EQ(result["device"].get<std::string>().rfind("cuda: ", 0), 0u) << result["device"];
    EXPECT_NE(result["device_report"]["launch"]["communicator"].get<std::string>().find("nccl"), std::string::npos);
    const auto& a = result["steps"];
    const auto& b = (*find_event(cpu, "result"))["steps"];
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i]["loss"].get<double>(), b[i]["loss"].get<double>(), 1e-4);
  } else {
    const auto* error = find_event(cuda, "error");
    ASSERT_NE(error, nullptr) << cuda.stdout_text << cuda.stderr_text;
    EXPECT_EQ((*error)["errors"][0]["field"], "device") << *error;
    EXPECT_NE((*error)["errors"][0]["message"].get<std::string>().find("rank "), std::string::npos) << *error;
    auto fallback = mpirun(2, {"-", "--device", "auto"}, request);
    ASSERT_EQ(fallback.exit_code, 0) << fallback.stderr_text;
    EXPECT_EQ((*find_event(fallback, "result"))["device_report"]["launch"]["communicator"].get<std::string>().rfind("mpi: ", 0), 0u);
  }
}

TEST_F(ProbeMpi, ProcessesThatDoNotFitTheLayoutAreAnErrorNamingIt) {
  auto o = mpirun(3, {"-"}, R"({"model": "tiny", "layout": {"tp": 2}, "steps": 1})");
  EXPECT_EQ(o.exit_code, 2) << o.stderr_text;
  const auto* error = find_event(o, "error");
  ASSERT_NE(error, nullptr) << o.stdout_text;
  EXPECT_EQ((*error)["errors"][0]["field"], "layout");
  EXPECT_NE((*error)["errors"][0]["message"].get<std::string>().find("started 3 processes"), std::string::npos) << *error;

  // Two ranks per process must keep each group inside a process or one member per process.
  auto split = mpirun(2, {"-"}, R"({"model": "tiny", "layout": {"dp": 4}, "steps": 1})");
  EXPECT_EQ(split.exit_code, 2) << split.stderr_text;
  const auto* why = find_event(split, "error");
  ASSERT_NE(why, nullptr) << split.stdout_text;
  EXPECT_EQ((*why)["errors"][0]["field"], "layout");
  EXPECT_NE((*why)["errors"][0]["message"].get<std::string>().find("would split the dp groups"), std::string::npos) << *why;
}

TEST_F(ProbeMpi, CliStoresComparesAndMarksFailedLaunchedRuns) {
  auto run = cli({"probe", "--model", "tiny", "--dp", "2", "--steps", "3", "--launcher", "mpirun -np 2", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text << run.stdout_text;
  const auto j = nlohmann::json::parse(run.stdout_text);
  EXPECT_EQ(j["device_report"]["launch"]["processes"], 2);
  const auto id = j["run_id"].get<std::int64_t>();
  auto compare = cli({"compare", std::to_string(id), "--json"});
  ASSERT_EQ(compare.exit_code, 0) << compare.stderr_text;
  const auto c = nlohmann::json::parse(compare.stdout_text);
  EXPECT_TRUE(c.contains("step")) << compare.stdout_text.substr(0, 1000);

  auto failed = cli({"probe", "--model", "tiny", "--tp", "2", "--steps", "3", "--launcher", "mpirun -np 3"});
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.stderr_text.find("started 3 processes"), std::string::npos) << failed.stderr_text;
  auto db = store::Store::open(db_);
  ASSERT_TRUE(db) << db.error_text();
  auto runs = db->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ(runs->front().status, store::RunStatus::failed);
  EXPECT_NE(runs->front().notes.find("started 3 processes"), std::string::npos) << runs->front().notes;
  EXPECT_EQ(runs->back().status, store::RunStatus::complete);

  auto bad = cli({"probe", "--model", "tiny", "--launcher", "mpirun 'unterminated"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.stderr_text.find("--launcher"), std::string::npos) << bad.stderr_text;
  auto missing = cli({"probe", "--model", "tiny", "--launcher", "no-such-launcher -np 2"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.stderr_text.find("not found on PATH"), std::string::npos) << missing.stderr_text;
}

}  // namespace
}  // namespace plansight::cli
