// Issue 17: no flag silently changes another field. `--gpus 1024 --tp 8 --pp 8` reported 100 GiB
// (does not fit) because --gpus reset the default's full recomputation; a GPU count the layout
// divides now keeps the layout, and every field still changed on the user's behalf (a replaced
// model's layout, a GPU count the layout does not divide, --vpp's schedule) is a "note:" on
// stderr and an entry of --json's "adjustments".
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "../support/cli_run.h"

namespace plansight::cli {
namespace {

using testing::run_cli;

nlohmann::json estimate(std::vector<std::string> flags, std::string* err = nullptr) {
  flags.insert(flags.begin(), "estimate");
  flags.push_back("--json");
  auto r = run_cli(flags);
  EXPECT_EQ(r.status, Status::ok) << r.err;
  if (err) *err = r.err;
  return nlohmann::json::parse(r.out);
}

bool has_adjustment(const nlohmann::json& j, const std::string& field, const std::string& text) {
  for (const auto& a : j["adjustments"]) {
    if (a["field"] == field && a["message"].get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(CliAdjustments, AGpuCountTheLayoutDividesKeepsTheLayout) {
  std::string err;
  const auto plain = estimate({});
  const auto same = estimate({"--gpus", "1024", "--tp", "8", "--pp", "8"}, &err);
  EXPECT_EQ(same["memory"]["total_bytes"], plain["memory"]["total_bytes"]);
  EXPECT_TRUE(same["memory"]["fits"].get<bool>());
  EXPECT_EQ(same["plan"]["layout"]["recompute"], "full");
  EXPECT_TRUE(same["adjustments"].empty()) << same["adjustments"].dump();
  EXPECT_EQ(err.find("note:"), std::string::npos) << err;
  const auto half = estimate({"--gpus", "512"});
  EXPECT_EQ(half["plan"]["layout"]["tp"], 8);
  EXPECT_EQ(half["plan"]["layout"]["pp"], 8);
  EXPECT_TRUE(half["adjustments"].empty()) << half["adjustments"].dump();
}

TEST(CliAdjustments, AResetLayoutNamesEveryFieldItChanged) {
  std::string err;
  const auto j = estimate({"--gpus", "16", "--tp", "2", "--global-batch", "512"}, &err);
  EXPECT_EQ(j["plan"]["layout"]["tp"], 2) << "given, so kept";
  EXPECT_TRUE(has_adjustment(j, "layout.pp", "set to 1 (was 8): cluster.gpus 16 is not a multiple of the layout's "
                                            "tp*pp*cp = 64"))
      << j["adjustments"].dump();
  EXPECT_TRUE(has_adjustment(j, "layout.recompute", "set to \"none\" (was \"full\")")) << j["adjustments"].dump();
  for (const auto& a : j["adjustments"]) EXPECT_NE(a["field"], "layout.tp") << "tp was given";
  EXPECT_NE(err.find("note: layout.recompute: set to \"none\" (was \"full\")"), std::string::npos) << err;
}

// An invalid GPU count is an error about that count only: it is no reason to reset the layout,
// and notes saying "cluster.gpus 0 is not a multiple of ..." above the error misled.
TEST(CliAdjustments, AnInvalidGpuCountChangesNothingElse) {
  for (const char* command : {"estimate", "search"}) {
    auto r = run_cli({command, "--gpus", "0"});
    EXPECT_NE(r.status, Status::ok) << command;
    EXPECT_NE(r.err.find("error: cluster.gpus: value 0 is invalid"), std::string::npos) << command << ": " << r.err;
    EXPECT_EQ(r.err.find("note:"), std::string::npos) << command << ": " << r.err;
  }
}

TEST(CliAdjustments, AReplacedModelNotesItsLayout) {
  std::string err;
  const auto j = estimate({"--model", "llama-2-7b", "--gpus", "64", "--global-batch", "512", "--pp", "2"}, &err);
  EXPECT_TRUE(has_adjustment(j, "layout.tp", "set to 1 (was 8): the model was replaced")) << j["adjustments"].dump();
  EXPECT_TRUE(has_adjustment(j, "layout.recompute", "the model was replaced")) << j["adjustments"].dump();
  EXPECT_FALSE(has_adjustment(j, "layout.pp", "")) << "pp was given";
  EXPECT_NE(err.find("note: layout.tp: set to 1 (was 8)"), std::string::npos) << err;
}

TEST(CliAdjustments, VirtualStagesNoteTheScheduleTheyImply) {
  std::string err;
  const auto j = estimate({"--vpp", "2"}, &err);
  EXPECT_EQ(j["plan"]["layout"]["schedule"], "interleaved");
  EXPECT_TRUE(has_adjustment(j, "layout.schedule", "vpp 2 runs only interleaved")) << j["adjustments"].dump();
  auto search = run_cli({"search", "--gpus", "16", "--model", "gpt3-1.3b", "--global-batch", "128", "--top", "1"});
  EXPECT_NE(search.err.find("note: layout.tp"), std::string::npos) << "every plan command notes";
}

// A flag and a plan file mean the same plan: "vpp": 2 in a file was 1F1B (then refused by
// validation) while --vpp 2 was interleaved. The rule lives in the estimator now.
TEST(CliAdjustments, VppInAPlanFileMeansWhatTheFlagMeans) {
  const std::string path = ::testing::TempDir() + "/vpp_plan.json";
  std::ofstream(path) << R"({"layout": {"vpp": 2}})";
  std::string err;
  const auto from_file = estimate({"--plan", path}, &err);
  const auto from_flag = estimate({"--vpp", "2"});
  EXPECT_EQ(from_file["plan"], from_flag["plan"]);
  EXPECT_TRUE(has_adjustment(from_file, "layout.schedule", "vpp 2 runs only interleaved")) << from_file["adjustments"].dump();
  // Once, also when a replaced model resets the layout (it was noted twice).
  const auto replaced = estimate({"--model", "gpt3-1.3b", "--gpus", "16", "--pp", "2", "--vpp", "2", "--global-batch", "64"});
  int notes = 0;
  for (const auto& a : replaced["adjustments"]) notes += a["field"] == "layout.schedule" ? 1 : 0;
  EXPECT_EQ(notes, 1) << replaced["adjustments"].dump();
  // A schedule the user names stays theirs (and validation judges it).
  std::ofstream(path) << R"({"layout": {"vpp": 2, "schedule": "1f1b"}})";
  auto named = run_cli({"estimate", "--plan", path, "--json"});
  EXPECT_EQ(named.status, Status::invalid_input) << "1F1B has no virtual stages";
  EXPECT_NE(named.out.find("vpp"), std::string::npos) << named.out;
}

}  // namespace
}  // namespace plansight::cli
