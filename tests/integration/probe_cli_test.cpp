// plansight-probe and `plansight probe/runs/compare` as programs: the JSON-lines protocol, exit
// codes, Ctrl-C keeping what was measured, and a probe run stored, listed, compared and
// deleted through the CLI. Processes are started with the app's own core::run_child().
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "plansight/core/child_process.h"
#include "plansight/store/store.h"

namespace plansight::cli {
namespace {

struct Output {
  int exit_code = -1;
  std::vector<nlohmann::json> events;  // every stdout line, parsed
  std::string stdout_text, stderr_text;
};

// Runs a program; `stop_after_progress` > 0 sends SIGINT after that many progress events.
Output run(const std::string& program, const std::vector<std::string>& args, const std::string& input = "",
           int stop_after_progress = 0) {
  Output o;
  std::atomic<bool> interrupt{false};
  int progress = 0;
  auto exit = core::run_child(program, args, input, [&](std::string_view line) {
    o.stdout_text += std::string(line) + "\n";
    auto j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    o.events.push_back(j);
    if (j.is_object() && j.value("event", "") == "progress" && ++progress == stop_after_progress) interrupt = true;
  }, &interrupt);
  EXPECT_TRUE(exit.ok()) << exit.error_text();
  if (exit) {
    o.exit_code = exit->exit_code;
    o.stderr_text = exit->stderr_text;
  }
  return o;
}

const nlohmann::json* find_event(const Output& o, const std::string& kind) {
  for (const auto& e : o.events) {
    if (e.is_object() && e.value("event", "") == kind) return &e;
  }
  return nullptr;
}

class ProbeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = (std::filesystem::temp_directory_path() /
           ("plansight_probe_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".sqlite"))
              .string();
    std::filesystem::remove(db_);
    ::setenv("PLANSIGHT_PROBE", PLANSIGHT_PROBE_EXE, 1);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + suffix);
  }
  Output cli(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(db_);
    return run(PLANSIGHT_CLI_EXE, args);
  }
  // `plansight <args>` with a shell script standing in for plansight-probe (`body` after the
  // shebang), which is removed again afterwards.
  Output cli_with_probe(const std::string& body, std::vector<std::string> args) {
    const std::string script = db_ + ".probe.sh";
    {
      std::ofstream f(script);
      f << "#!/bin/sh\n" << body;
    }
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    ::setenv("PLANSIGHT_PROBE", script.c_str(), 1);
    Output o = cli(std::move(args));
    std::filesystem::remove(script);
    return o;
  }
  std::string db_;
};

TEST_F(ProbeCli, BadRequestExitsTwoNamingTheField) {
  auto o = run(PLANSIGHT_PROBE_EXE, {"-"}, R"({"model": "small", "layout": {"tp": 3}, "steps": 0})");
  EXPECT_EQ(o.exit_code, 2);
  const auto* error = find_event(o, "error");
  ASSERT_NE(error, nullptr) << o.stdout_text;
  std::vector<std::string> fields;
  for (const auto& e : (*error)["errors"]) fields.push_back(e["field"]);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "layout.tp"), fields.end()) << o.stdout_text;
  EXPECT_NE(std::find(fields.begin(), fields.end(), "steps"), fields.end()) << o.stdout_text;
  EXPECT_EQ((*error)["kind"], "bad_request");
  EXPECT_EQ((*error)["exit_code"], 2);
  EXPECT_EQ(run(PLANSIGHT_PROBE_EXE, {"-"}, "{not json").exit_code, 2);
  EXPECT_EQ(run(PLANSIGHT_PROBE_EXE, {"/nonexistent/request.json"}).exit_code, 2);
}

// The exit code follows the error's kind, not the name of its field: a rank that fails in a
// valid run is a failed run (1) even though its error could name any field.
TEST_F(ProbeCli, AFailingRankIsAFailedRunNotABadRequest) {
  auto o = run(PLANSIGHT_PROBE_EXE, {"-", "--inject-failure", "1:2"},
               R"({"model": "tiny", "layout": {"dp": 2}, "steps": 3})");
  EXPECT_EQ(o.exit_code, 1) << o.stderr_text;
  const auto* error = find_event(o, "error");
  ASSERT_NE(error, nullptr) << o.stdout_text;
  EXPECT_EQ((*error)["kind"], "failed");
  EXPECT_NE((*error)["errors"][0]["message"].get<std::string>().find("rank 1"), std::string::npos) << o.stdout_text;
  EXPECT_EQ(find_event(o, "result"), nullptr);
}

TEST_F(ProbeCli, TinyRunWritesTheProtocol) {
  auto o = run(PLANSIGHT_PROBE_EXE, {}, R"({"model": "tiny", "steps": 3})");
  ASSERT_EQ(o.exit_code, 0) << o.stderr_text << o.stdout_text;
  for (const auto& e : o.events) ASSERT_FALSE(e.is_discarded()) << "every line is JSON:\n" << o.stdout_text;
  ASSERT_NE(find_event(o, "started"), nullptr);
  EXPECT_EQ((*find_event(o, "started"))["request"]["model"]["layers"], 2);
  int progress = 0;
  for (const auto& e : o.events) {
    if (e["event"] != "progress") continue;
    ++progress;
    EXPECT_EQ(e["steps"], 3);
    for (const char* key : {"step", "loss", "elapsed_s", "eta_s"}) EXPECT_TRUE(e.contains(key)) << key;
  }
  EXPECT_GE(progress, 3);
  const auto* result = find_event(o, "result");
  ASSERT_NE(result, nullptr);
  ASSERT_EQ((*result)["steps"].size(), 3u);
  for (const auto& s : (*result)["steps"]) EXPECT_TRUE(s["loss"].is_number() && std::isfinite(s["loss"].get<double>()));
  EXPECT_GT((*result)["step_time_s"].get<double>(), 0);
  EXPECT_FALSE((*result)["stopped_early"].get<bool>());
  EXPECT_FALSE((*result)["memory"].empty());
  ASSERT_NE(find_event(o, "done"), nullptr);
  EXPECT_EQ(o.events.back()["event"], "done") << "done is the last line";
}

TEST_F(ProbeCli, SigintKeepsTheStepsSoFar) {
  auto o = run(PLANSIGHT_PROBE_EXE, {}, R"({"model": "tiny", "steps": 100000})", 3);
  EXPECT_EQ(o.exit_code, 130) << o.stderr_text;
  const auto* result = find_event(o, "result");
  ASSERT_NE(result, nullptr) << o.stdout_text.substr(0, 2000);
  EXPECT_TRUE((*result)["stopped_early"].get<bool>());
  const auto steps = (*result)["steps"].size();
  EXPECT_GE(steps, 3u);
  EXPECT_LT(steps, 1000u) << "the run ended soon after the signal";
}

// Without a usable GPU (no CUDA in the build, no driver, no device) `--device cuda` fails on the
// field "device" saying why, and `--device auto` trains on the CPU; with one, cuda trains there.
TEST_F(ProbeCli, CudaWithoutAGpuSaysSoAndAutoFallsBack) {
  auto o = run(PLANSIGHT_PROBE_EXE, {"-", "--device", "cuda"}, R"({"model": "tiny", "steps": 1})");
  if (o.exit_code == 0) {
    const auto* result = find_event(o, "result");
    ASSERT_NE(result, nullptr);
    EXPECT_EQ((*result)["device"].get<std::string>().rfind("cuda: ", 0), 0u) << (*result)["device"];
  } else {
    const auto* error = find_event(o, "error");
    ASSERT_NE(error, nullptr);
    EXPECT_EQ((*error)["errors"][0]["field"], "device");
    EXPECT_TRUE(o.stderr_text.find("CUDA") != std::string::npos || o.stderr_text.find("GPU") != std::string::npos)
        << o.stderr_text;
  }
  auto fallback = run(PLANSIGHT_PROBE_EXE, {"-", "--device", "auto"}, R"({"model": "tiny", "steps": 1})");
  EXPECT_EQ(fallback.exit_code, 0) << fallback.stderr_text;
}

// A 16-bit precision needs a GPU: on the CPU the request is refused naming the field.
TEST_F(ProbeCli, SixteenBitPrecisionOnTheCpuIsRefused) {
  auto o = run(PLANSIGHT_PROBE_EXE, {"-"}, R"({"model": "tiny", "steps": 1, "device": "cpu", "precision": "bf16"})");
  EXPECT_EQ(o.exit_code, 2) << o.stderr_text;
  const auto* error = find_event(o, "error");
  ASSERT_NE(error, nullptr);
  EXPECT_EQ((*error)["errors"][0]["field"], "precision");
}

// --precision reaches the request: the probe refuses bf16 on the CPU naming the field, and an
// fp32 run says its precision in the summary and the JSON.
TEST_F(ProbeCli, PrecisionFlagReachesTheRequest) {
  auto refused = cli({"probe", "--model", "tiny", "--steps", "1", "--device", "cpu", "--precision", "bf16"});
  EXPECT_EQ(refused.exit_code, 2) << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("precision"), std::string::npos) << refused.stderr_text;

  auto text = cli({"probe", "--model", "tiny", "--steps", "2", "--device", "cpu", "--precision", "fp32"});
  ASSERT_EQ(text.exit_code, 0) << text.stderr_text;
  EXPECT_NE(text.stdout_text.find("  precision     fp32\n"), std::string::npos) << text.stdout_text;
  EXPECT_EQ(text.stdout_text.find("tensor cores"), std::string::npos) << "no tensor cores on the CPU";

  auto json = cli({"probe", "--model", "tiny", "--steps", "2", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
  const auto j = nlohmann::json::parse(json.stdout_text);
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_TRUE(j["device_report"].is_object());
}

// Learning rate, its warm-up, weight decay, seed and the data are request fields from the CLI,
// stored with the run (the plan JSON of a probe run is its request).
TEST_F(ProbeCli, TrainingFlagsReachTheRequest) {
  auto r = cli({"probe", "--model", "tiny", "--steps", "2", "--learning-rate", "1e-3", "--lr-warmup-steps", "5",
                "--weight-decay", "0.1", "--seed", "7", "--data", "corpus", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto j = nlohmann::json::parse(r.stdout_text);
  auto db = store::Store::open(db_);
  ASSERT_TRUE(db.ok()) << db.error_text();
  auto run = db->get_run(j["run_id"].get<std::int64_t>());
  ASSERT_TRUE(run.ok() && run->plan) << run.error_text();
  EXPECT_EQ((*run->plan)["learning_rate"], 1e-3);
  EXPECT_EQ((*run->plan)["lr_warmup_steps"], 5);
  EXPECT_EQ((*run->plan)["weight_decay"], 0.1);
  EXPECT_EQ((*run->plan)["seed"], 7);
  EXPECT_EQ((*run->plan)["data"], "corpus");
  auto bad = cli({"probe", "--model", "tiny", "--data", "wikipedia"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.stderr_text.find("data: unknown value \"wikipedia\"; valid: synthetic, corpus"), std::string::npos)
      << bad.stderr_text;
}

// The CLI reads its request with the probe protocol's own reader: a request the probe would
// refuse is refused before any probe starts, with the probe's message and exit code 2.
TEST_F(ProbeCli, ABadRequestIsRefusedBeforeTheProbeStarts) {
  const std::string marker = db_ + ".started";
  auto o = cli_with_probe("touch '" + marker + "'\ncat > /dev/null\nexit 1\n", {"probe", "--model", "tiny", "--tp", "3"});
  EXPECT_EQ(o.exit_code, 2) << o.stderr_text;
  EXPECT_NE(o.stderr_text.find("layout.tp: value 3 must divide model.heads (4)"), std::string::npos) << o.stderr_text;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "no probe was started";
  std::filesystem::remove(marker);
}

// A probe whose result breaks the protocol's schema: the run is marked failed and the message
// names the field the app could not read, instead of storing a guess.
TEST_F(ProbeCli, AResultThatBreaksTheSchemaNamesTheFieldAndFailsTheRun) {
  auto o = cli_with_probe(
      "cat > /dev/null\n"
         "echo '{\"event\":\"started\",\"protocol\":1,\"device\":\"cpu: test\",\"world_size\":1,\"request\":{\"model\":\"tiny\"}}'\n"
         "echo '{\"event\":\"result\",\"device\":\"cpu: test\",\"steps\":[{\"step\":1,\"loss\":5.5,\"seconds\":\"fast\"}],"
         "\"step_time_s\":0.002,\"stopped_early\":false,\"memory\":[]}'\n"
         "echo '{\"event\":\"done\",\"exit_code\":0}'\n",
      {"probe"});
  EXPECT_EQ(o.exit_code, 1) << o.stderr_text;
  EXPECT_NE(o.stderr_text.find("result.steps[0].seconds"), std::string::npos) << o.stderr_text;
  auto list = cli({"runs", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.stderr_text;
  const auto runs = nlohmann::json::parse(list.stdout_text)["runs"];
  ASSERT_EQ(runs.size(), 1u) << list.stdout_text;
  EXPECT_EQ(runs[0]["status"], "failed") << list.stdout_text;
}

// A GPU run's summary, from a script speaking the protocol as plansight-probe --device cuda does:
// the precision and the tensor-core share of the step and of each phase.
TEST_F(ProbeCli, AGpuRunPrintsItsTensorCoreShare) {
  auto text = cli_with_probe(
      "cat > /dev/null\n"
         "echo '{\"event\":\"started\",\"protocol\":1,\"device\":\"cuda: NVIDIA H100 (sm_90, 79 GiB)\",\"world_size\":1,"
         "\"request\":{\"model\":\"tiny\",\"device\":\"cuda\",\"precision\":\"bf16\",\"global_batch\":1,\"seq_len\":64,"
         "\"layout\":{\"tp\":1}}}'\n"
         "echo '{\"event\":\"result\",\"device\":\"cuda: NVIDIA H100 (sm_90, 79 GiB)\",\"steps\":[{\"step\":1,\"loss\":5.5,"
         "\"seconds\":0.002}],\"step_time_s\":0.002,\"stopped_early\":false,\"memory\":[],\"device_report\":{\"precision\":\"bf16\",\"tensor_cores\":{\"source\":\"kernel-name rules\","
         "\"step\":{\"share\":0.718},\"by_phase\":{\"forward\":{\"share\":0.801},\"backward\":{\"share\":0.75}}}}}'\n"
         "echo '{\"event\":\"done\",\"exit_code\":0}'\n",
      {"probe"});
  ASSERT_EQ(text.exit_code, 0) << text.stderr_text << text.stdout_text;
  EXPECT_NE(text.stdout_text.find("  precision     bf16\n"), std::string::npos) << text.stdout_text;
  EXPECT_NE(text.stdout_text.find("  tensor cores  71.8 % of kernel time (kernel-name rules); backward 75.0 %, forward 80.1 %\n"),
            std::string::npos)
      << text.stdout_text;
}

TEST_F(ProbeCli, ProbeStoreListCompareDelete) {
  const auto t0 = std::chrono::steady_clock::now();
  auto probe = cli({"probe", "--model", "small", "--tp", "2", "--pp", "2", "--schedule", "1f1b", "--steps", "10", "--json"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(probe.exit_code, 0) << probe.stderr_text << probe.stdout_text;
  EXPECT_LT(seconds, 60) << "a small 4-rank probe with calibration finishes within a minute";
  const auto j = nlohmann::json::parse(probe.stdout_text);
  for (const char* key : {"run_id", "device", "layout", "steps", "step_time_s", "loss", "memory"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["steps"], 10);
  EXPECT_EQ(j["loss"].size(), 10u);
  EXPECT_EQ(j["layout"]["tp"], 2);
  EXPECT_GT(j["step_time_s"].get<double>(), 0);
  EXPECT_GT(j["memory"]["weights"].get<double>(), 0);
  const std::string id = std::to_string(j["run_id"].get<long long>());

  auto list = cli({"runs", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.stderr_text;
  const auto runs = nlohmann::json::parse(list.stdout_text)["runs"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "complete");
  EXPECT_EQ(runs[0]["kind"], "probe");

  auto show = cli({"runs", "show", id, "--json"});
  ASSERT_EQ(show.exit_code, 0) << show.stderr_text;
  const auto shown = nlohmann::json::parse(show.stdout_text);
  EXPECT_EQ(shown["plan"]["layout"]["pp"], 2);
  ASSERT_EQ(shown["timelines"].size(), 1u);
  EXPECT_EQ(shown["timelines"][0]["source"], "measured");
  EXPECT_EQ(shown["summary"]["loss_per_step"].size(), 10u);

  auto compare = cli({"compare", id, "--json"});
  ASSERT_EQ(compare.exit_code, 0) << compare.stderr_text;
  const auto c = nlohmann::json::parse(compare.stdout_text);
  for (const char* key : {"predicted_s", "measured_s", "error"}) ASSERT_TRUE(c["step"].contains(key)) << key;
  EXPECT_GT(c["step"]["predicted_s"].get<double>(), 0);
  EXPECT_TRUE(std::isfinite(c["step"]["error"].get<double>()));
  std::vector<std::string> phases;
  for (const auto& p : c["phases"]) {
    phases.push_back(p["phase"]);
    for (const char* key : {"predicted_s", "measured_s", "error"}) EXPECT_TRUE(p.contains(key)) << key;
    if (p["error"].is_number()) {
      EXPECT_TRUE(std::isfinite(p["error"].get<double>()));
    }
  }
  for (const char* phase : {"forward", "backward", "communication", "idle", "optimizer"}) {
    EXPECT_NE(std::find(phases.begin(), phases.end(), phase), phases.end()) << phase;
  }
  for (const auto& m : c["memory"]) {
    for (const char* key : {"category", "predicted_bytes", "measured_bytes", "error"}) EXPECT_TRUE(m.contains(key)) << key;
    if (m["error"].is_number()) {
      EXPECT_TRUE(std::isfinite(m["error"].get<double>()));
    }
  }
  EXPECT_FALSE(c.contains("operators")) << "per operator only when asked";

  // Per operator: every operator of the layer forward and backward was traced on this CPU run,
  // each with the processor time its threads' clocks read.
  auto by_operator = cli({"compare", id, "--operators", "--json"});
  ASSERT_EQ(by_operator.exit_code, 0) << by_operator.stderr_text;
  const auto o = nlohmann::json::parse(by_operator.stdout_text);
  ASSERT_TRUE(o.contains("operators"));
  EXPECT_TRUE(o["operators_measured_cpu_time"].get<bool>());
  int traced = 0;
  for (const auto& r : o["operators"]) {
    EXPECT_GT(r["predicted_s"].get<double>(), 0) << r.dump();
    if (r["measured_calls"].get<int>() > 0) {
      ++traced;
      EXPECT_GT(r["measured_s"].get<double>(), 0) << r.dump();
    }
  }
  EXPECT_GE(traced, 16) << o["operators"].dump();
  auto table = cli({"compare", id, "--operators"});
  ASSERT_EQ(table.exit_code, 0) << table.stderr_text;
  EXPECT_NE(table.stdout_text.find("activation (GeLU)"), std::string::npos) << table.stdout_text;

  EXPECT_EQ(cli({"runs", "delete", id}).exit_code, 0);
  EXPECT_EQ(cli({"runs", "show", id}).exit_code, 2) << "a deleted run is gone";
  EXPECT_TRUE(nlohmann::json::parse(cli({"runs", "--json"}).stdout_text)["runs"].empty());
}

// `plansight analyze ID` failed on every probe run with "internal failure: [json.exception.
// type_error.306] cannot use value() with boolean": a probe run's stored plan is its request,
// whose "trace" is a boolean, and analyze read it as an imported trace's {"trace": {...}}.
TEST_F(ProbeCli, AnalyzeReadsAProbeRun) {
  auto probe = cli({"probe", "--model", "tiny", "--tp", "2", "--steps", "2", "--json"});
  ASSERT_EQ(probe.exit_code, 0) << probe.stderr_text << probe.stdout_text;
  const std::string id = std::to_string(nlohmann::json::parse(probe.stdout_text)["run_id"].get<long long>());

  auto analysis = cli({"analyze", id, "--json"});
  ASSERT_EQ(analysis.exit_code, 0) << analysis.stderr_text;
  const auto j = nlohmann::json::parse(analysis.stdout_text);
  EXPECT_EQ(j["source"], "measured");
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (const auto& r : j["ranks"]) EXPECT_GT(r["busy_s"].get<double>(), 0);
  // The probe's tensor-parallel all-reduces, with the group size of the run's request (tp 2),
  // so their bus bandwidth is nccl-tests' 2 (n - 1) / n = 1 times the algorithm bandwidth.
  bool tp_all_reduce = false;
  for (const auto& c : j["collectives"]) {
    if (c["kind"] != "all_reduce" || c["group_size"] != 2) continue;
    tp_all_reduce = true;
    EXPECT_GT(c["count"].get<long long>(), 0);
    EXPECT_DOUBLE_EQ(c["busbw_gb_per_s"].get<double>(), c["algbw_gb_per_s"].get<double>());
  }
  EXPECT_TRUE(tp_all_reduce) << analysis.stdout_text;

  auto text = cli({"analyze", id});
  EXPECT_EQ(text.exit_code, 0) << text.stderr_text;
  EXPECT_NE(text.stdout_text.find("measured timeline"), std::string::npos) << text.stdout_text;
}

TEST_F(ProbeCli, BadFlagsAreNamed) {
  auto o = cli({"probe", "--model", "small", "--tp", "3", "--steps", "1"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.stderr_text.find("layout.tp"), std::string::npos) << o.stderr_text;
  EXPECT_EQ(cli({"compare", "nope"}).exit_code, 2);
  EXPECT_EQ(cli({"runs", "frobnicate"}).exit_code, 2);
}

}  // namespace
}  // namespace plansight::cli
