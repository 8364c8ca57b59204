// Trace commands end to end on the project's fixtures: import (Kineto directory, legacy file,
// a bad file that must store nothing), analyze with default and custom rules, export to
// Chrome trace-event JSON, diff of two runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../support/cli_run.h"
#include "plansight/cli/commands.h"
#include "plansight/store/store.h"

namespace plansight::cli {
namespace {


class TraceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::path(::testing::TempDir()) / ("trace_cli_" + std::to_string(::getpid()) + ".sqlite");
    std::filesystem::remove(db_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + suffix);
  }
  testing::CliRun cli(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(db_.string());
    return testing::run_cli(args);
  }
  static std::string fixture(const std::string& name) { return std::string(PLANSIGHT_TEST_DATA_DIR) + "/traces/" + name; }
  std::filesystem::path db_;
};

TEST_F(TraceCli, ImportAnalyzeExportDiff) {
  auto a = cli({"import", fixture("kineto_multirank"), "--json"});
  ASSERT_EQ(a.status, Status::ok) << a.err;
  const auto imported = nlohmann::json::parse(a.out);
  EXPECT_EQ(imported["run_id"], 1);
  EXPECT_EQ(imported["ranks"].size(), 2u);
  EXPECT_GT(imported["collectives"].get<int>(), 0);

  auto analysis = cli({"analyze", "1", "--json"});
  ASSERT_EQ(analysis.status, Status::ok) << analysis.err;
  const auto j = nlohmann::json::parse(analysis.out);
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (const char* k : {"window_s", "busy_s", "idle_s", "compute_s", "communication_s", "overlap", "hta"}) {
    EXPECT_TRUE(j["ranks"][0].contains(k)) << k;
  }
  ASSERT_FALSE(j["collectives"].empty());
  double best_busbw = 0;  // calls without size metadata (group size unknown) have no bandwidth: null
  int unknown = 0;
  for (const auto& c : j["collectives"]) {
    if (c["group_size"].is_null()) {
      EXPECT_TRUE(c["busbw_gb_per_s"].is_null()) << c.dump();
      ++unknown;
      continue;
    }
    best_busbw = std::max(best_busbw, c["busbw_gb_per_s"].get<double>());
  }
  EXPECT_GT(best_busbw, 1.0);
  EXPECT_EQ(unknown, 1) << "the fixture's all-reduce without NCCL metadata";
  // Issue 17: the fixture is data-parallel (no stage tags, no send/recv): no rank is a stage.
  EXPECT_EQ(j["pipelined"], false);
  EXPECT_TRUE(j["pipeline_bubbles"].empty());
  auto text = cli({"analyze", "1"});
  EXPECT_NE(text.out.find("pipeline bubbles: none, no pipeline parallelism in this run"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("n=?        1 calls   200.0 µs  busbw unknown (group size not in the trace)"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("busbw 0.0"), std::string::npos) << text.out;
  EXPECT_EQ(j["alignment"]["offsets"].size(), 2u);
  EXPECT_EQ(cli({"analyze", "1", "--align", "collective-end", "--json"}).status, Status::ok);
  EXPECT_EQ(cli({"analyze", "1", "--align", "sideways"}).status, Status::invalid_input);

  // Custom rules: nothing is communication, so no rank has communication time.
  const auto rules = std::filesystem::path(::testing::TempDir()) / "no_comm_rules.json";
  std::ofstream(rules) << R"({"version": 1, "name": "test", "rules": [{"class": "compute", "contains": ""}]})";
  auto custom = cli({"analyze", "1", "--rules", rules.string(), "--json"});
  if (custom.status == Status::ok) {
    EXPECT_EQ(nlohmann::json::parse(custom.out)["ranks"][0]["communication_s"].get<double>(), 0.0);
  } else {
    EXPECT_NE(custom.err.find("rules"), std::string::npos) << custom.err;
  }

  const auto out = std::filesystem::path(::testing::TempDir()) / "trace_cli_export.json";
  auto e = cli({"export", "1", "--format", "perfetto", "--out", out.string()});
  ASSERT_EQ(e.status, Status::ok) << e.err;
  std::ifstream in(out);
  const auto trace = nlohmann::json::parse(in);
  ASSERT_TRUE(trace.contains("traceEvents"));
  EXPECT_GT(trace["traceEvents"].size(), 10u);

  ASSERT_EQ(cli({"import", fixture("kineto_legacy_2021.json"), "--name", "legacy"}).status, Status::ok);
  auto d = cli({"diff", "1", "2", "--json"});
  ASSERT_EQ(d.status, Status::ok) << d.err;
  const auto diff = nlohmann::json::parse(d.out);
  EXPECT_TRUE(diff.contains("makespan"));
  EXPECT_FALSE(diff["phases"].empty());
  EXPECT_FALSE(diff["kernel_classes"].empty());
}

TEST_F(TraceCli, BadTraceStoresNothing) {
  const auto bad = std::filesystem::path(::testing::TempDir()) / "truncated_trace.json";
  std::ofstream(bad) << R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur")";
  auto r = cli({"import", bad.string()});
  EXPECT_EQ(r.status, Status::invalid_input);
  EXPECT_NE(r.err.find("byte"), std::string::npos) << r.err;
  auto store = store::Store::open(db_);
  if (store) {
    auto runs = store->list_runs();
    ASSERT_TRUE(runs.ok());
    EXPECT_TRUE(runs->empty());
  }
  EXPECT_EQ(cli({"analyze", "7"}).status, Status::invalid_input);
  EXPECT_EQ(cli({"analyze", "x"}).status, Status::invalid_input);
  EXPECT_EQ(cli({"export", "1", "--format", "svg", "--out", "/tmp/x"}).status, Status::invalid_input);
}

}  // namespace
}  // namespace plansight::cli
