// `plansight examples`: the table of every example with ours beside the published value (golden
// lines), one example's source and explanation, --json, --write-plan giving a plan file that
// `estimate --plan` reads back to the same numbers, and the errors of bad names and rows.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "../support/cli_run.h"

namespace plansight::cli {
namespace {

using testing::run_cli;

TEST(ExamplesCli, TableShowsOursBesideThePublishedValue) {
  auto r = run_cli({"examples"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  for (const char* line : {
           "zero-stages-7.5b: ZeRO stages 0-3: a 7.5B model on 64 GPUs\n",
           "  ZeRO-1 (P_os)                                31.27       31.4    -0.4 %  GB\n",
           "  ZeRO-3 (P_os+g+p)                            1.867       1.88    -0.7 %  GB\n",
           "  weights                                      650.5      651.9    -0.2 %  GiB\n",
           "  1F1B, m = 8                                  0.382      0.375    +1.9 %  -\n",
       }) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "in\n" << r.out;
  }
  EXPECT_EQ(r.out.find("(outside"), std::string::npos) << "every row within its tolerance:\n" << r.out;
}

TEST(ExamplesCli, OneExampleWithItsSourceAndJson) {
  auto one = run_cli({"examples", "activation-recomputation-175b"});
  ASSERT_EQ(one.status, Status::ok) << one.err;
  EXPECT_NE(one.out.find("source: Korthikanti et al. 2022"), std::string::npos) << one.out;
  auto json = run_cli({"examples", "pipeline-bubble", "--json"});
  ASSERT_EQ(json.status, Status::ok) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["examples"].size(), 1u);
  const auto& rows = j["examples"][0]["rows"];
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0]["published"], 0.75);
  EXPECT_TRUE(rows[0]["within_tolerance"].get<bool>());
}

TEST(ExamplesCli, WrittenPlanEstimatesToTheSameValue) {
  const std::string path = ::testing::TempDir() + "/example_zero3.json";
  auto write = run_cli({"examples", "zero-stages-7.5b", "--row", "4", "--write-plan", path});
  ASSERT_EQ(write.status, Status::ok) << write.err;
  auto e = run_cli({"estimate", "--plan", path, "--json"});
  ASSERT_EQ(e.status, Status::ok) << e.err;
  const auto j = nlohmann::json::parse(e.out);
  const double states = j["memory"]["weights_bytes"].get<double>() + j["memory"]["gradients_bytes"].get<double>() +
                        j["memory"]["optimizer_bytes"].get<double>();
  EXPECT_NEAR(states / 1e9, 1.867, 0.001) << "ZeRO-3's model states per GPU, as the examples table says";
  EXPECT_EQ(j["plan"]["layout"]["zero_stage"], 3);
  std::filesystem::remove(path);
}

TEST(ExamplesCli, BadNamesAndRowsAreNamed) {
  auto name = run_cli({"examples", "zero"});
  EXPECT_EQ(name.status, Status::invalid_input);
  EXPECT_NE(name.err.find("example: unknown example \"zero\"; valid: adam-bytes-per-parameter"), std::string::npos) << name.err;
  auto row = run_cli({"examples", "zero-stages-7.5b", "--row", "9", "--write-plan", ::testing::TempDir() + "/x.json"});
  EXPECT_EQ(row.status, Status::invalid_input);
  EXPECT_NE(row.err.find("--row: value 9 is out of range; valid: 1 to 4"), std::string::npos) << row.err;
  auto unnamed = run_cli({"examples", "--write-plan", "x.json"});
  EXPECT_EQ(unnamed.status, Status::invalid_input);
  EXPECT_NE(unnamed.err.find("--write-plan: name the example"), std::string::npos) << unnamed.err;
}

}  // namespace
}  // namespace plansight::cli
