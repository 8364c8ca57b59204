// `plansight sweep`: the table, CSV and JSON of a sweep and its errors (below).
// `plansight examples`: the table of every example with ours beside the published value (golden
// lines), one example's source and explanation, --json, --write-plan giving a plan file that
// `estimate --plan` reads back to the same numbers, and the errors of bad names and rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

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
           "  1F1B, m = 8                                 0.3811      0.375    +1.6 %  -\n",
       }) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "in\n" << r.out;
  }
  // Only the rows whose examples say ours is far off (tests/unit/examples_test.cpp, kOutsideAbove)
  // are marked outside their tolerance.
  const std::vector<std::string> outside_rows = {
      "  ZeRO-3, no model parallelism, 384 GPUs ", "  ZeRO-3, no model parallelism, 768 GPUs ",
      "  ZeRO-3, no model parallelism, 1536 GPUs ", "  50,257 tokens (unpadded) ",
      "  50,304 tokens (padded to a multiple of 64) "};
  std::size_t marked = 0;
  for (std::size_t at = r.out.find("(outside"); at != std::string::npos; at = r.out.find("(outside", at + 1)) {
    ++marked;
    const std::size_t line_start = r.out.rfind('\n', at) + 1;
    const std::string line = r.out.substr(line_start, r.out.find('\n', at) - line_start);
    bool expected = false;
    for (const auto& row : outside_rows) expected = expected || line.starts_with(row);
    EXPECT_TRUE(expected) << "marked outside its tolerance: " << line;
  }
  EXPECT_EQ(marked, outside_rows.size()) << r.out;
}

TEST(ExamplesCli, OneExampleWithItsSourceAndJson) {
  auto one = run_cli({"examples", "selective-recomputation-530b"});
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
  // --row picks the row whose plan --write-plan writes: alone it did nothing, silently.
  auto alone = run_cli({"examples", "zero-stages-7.5b", "--row", "9"});
  EXPECT_EQ(alone.status, Status::invalid_input);
  EXPECT_NE(alone.err.find("--row: chooses the row whose plan --write-plan writes"), std::string::npos) << alone.err;
}

// `plansight diff A.json B.json`: two plan files side by side.
TEST(PlanDiffCli, TwoPlanFilesSideBySide) {
  const std::string a = ::testing::TempDir() + "/diff_ddp.json", b = ::testing::TempDir() + "/diff_zero3.json";
  ASSERT_EQ(run_cli({"examples", "zero-stages-7.5b", "--row", "1", "--write-plan", a}).status, Status::ok);
  ASSERT_EQ(run_cli({"examples", "zero-stages-7.5b", "--row", "4", "--write-plan", b}).status, Status::ok);
  auto text = run_cli({"diff", a, b});
  ASSERT_EQ(text.status, Status::ok) << text.err;
  for (const char* line : {"changed fields (A -> B)\n  layout.zero_stage                   0 -> 3\n",
                           "\n  optimizer states (GiB)         83.46       1.304      -82.15    0.02x\n",
                           "\n  pipeline bubble (s)                0           0           0        -\n"}) {
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "in\n" << text.out;
  }
  auto json = run_cli({"diff", a, b, "--json"});
  ASSERT_EQ(json.status, Status::ok) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["changed_fields"].size(), 1u);
  EXPECT_EQ(j["changed_fields"][0]["field"], "layout.zero_stage");
  auto same = run_cli({"diff", a, a});
  EXPECT_NE(same.out.find("the plans are the same"), std::string::npos);
  auto missing = run_cli({"diff", a, ::testing::TempDir() + "/absent.json"});
  EXPECT_EQ(missing.status, Status::invalid_input);
  EXPECT_NE(missing.err.find("absent.json"), std::string::npos) << missing.err;
}

// `plansight placement`: the groups' links and the first nodes' GPUs.
TEST(PlacementCli, MapAndLinks) {
  auto r = run_cli({"placement", "--gpus", "32", "--tp", "4", "--pp", "2", "--global-batch", "64", "--nodes", "2"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  for (const char* line : {"placement tp-cp-dp-pp (innermost first) on 32 GPUs, 4 nodes of 8\n",
                           "  TP     4 ranks, stride 1     inside a node, 300 GB/s\n",
                           "  CP     1 rank,  stride 4     no communication\n",
                           "  DP     4 ranks, stride 4     across nodes, 50 GB/s\n",  // 2 members per node: 2 NICs (span_link)
                           "node 1: gpu0 t0 d2 p0 | gpu1 t1 d2 p0 | gpu2 t2 d2 p0 | gpu3 t3 d2 p0 | gpu4 t0 d3 p0 |",
                           "... 2 more nodes (--nodes N shows more, --json lists every rank)\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "in\n" << r.out;
  }
  auto j = run_cli({"placement", "--gpus", "16", "--tp", "2", "--pp", "2", "--global-batch", "64", "--json"});
  ASSERT_EQ(j.status, Status::ok) << j.err;
  const auto json = nlohmann::json::parse(j.out);
  ASSERT_EQ(json["ranks"].size(), 16u);
  EXPECT_EQ(json["ranks"][13]["pp"], 1);
  EXPECT_EQ(json["ranks"][13]["tp"], 1);
  auto bad = run_cli({"placement", "--tp", "3"});
  EXPECT_EQ(bad.status, Status::invalid_input);
}

TEST(SweepCli, TableCsvJsonAndErrors) {
  const std::vector<std::string> plan = {"--gpus", "32", "--tp", "8", "--pp", "4"};
  auto args = [&](std::vector<std::string> a) {
    a.insert(a.end(), plan.begin(), plan.end());
    return a;
  };
  auto table = run_cli(args({"sweep", "micro_batches=4..16*2", "--metric", "bubble_fraction,memory_gib"}));
  ASSERT_EQ(table.status, Status::ok) << table.err;
  EXPECT_EQ(table.out.substr(0, table.out.find('\n')), " micro_batches     bubble_fraction  memory_gib (GiB)");
  EXPECT_NE(table.out.find("\n             4             0.75819            142.51\n"), std::string::npos) << table.out;

  auto csv = run_cli(args({"sweep", "pp=3..4", "--metric", "memory_gib", "--csv"}));
  ASSERT_EQ(csv.status, Status::ok) << csv.err;
  EXPECT_NE(csv.out.find("pp,memory_gib,error\n3,,\"cluster.gpus: value 32 is not a multiple of tp*pp*cp = 24"), std::string::npos)
      << csv.out;

  // DP 4 (128 GPUs / TP 8 / PP 4): ZeRO-3 shards the model states four ways (at DP 1 it saves nothing).
  auto json = run_cli({"sweep", "zero=0,3", "--metric", "model_states_gb", "--json", "--gpus", "128", "--tp", "8", "--pp", "4"});
  ASSERT_EQ(json.status, Status::ok) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["path"], "layout.zero_stage");
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_LT(j["points"][1]["model_states_gb"].get<double>(), j["points"][0]["model_states_gb"].get<double>());

  auto no_metric = run_cli({"sweep", "pp=1..2"});
  EXPECT_EQ(no_metric.status, Status::invalid_input);
  EXPECT_NE(no_metric.err.find("--metric: give one or more metrics; valid: memory_gib"), std::string::npos) << no_metric.err;
  auto bad_field = run_cli({"sweep", "speed=1..2", "--metric", "mfu"});
  EXPECT_NE(bad_field.err.find("field: \"speed\" is not a numeric plan field"), std::string::npos) << bad_field.err;
  auto bad_values = run_cli({"sweep", "pp=8..1", "--metric", "mfu"});
  EXPECT_NE(bad_values.err.find("values: \"8..1\": the range must not run backwards"), std::string::npos) << bad_values.err;
  auto no_field = run_cli({"sweep", "--metric", "mfu"});
  EXPECT_NE(no_field.err.find("sweep: give one FIELD=VALUES"), std::string::npos) << no_field.err;
}

}  // namespace
// --params 1e9: "what does a 1 B model need?" in one flag, the same plan with and without --json.
TEST(ParamsCli, BuildsAGptShapedModelOfThatSize) {
  auto r = run_cli({"estimate", "--params", "1e9", "--gpus", "8", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["model"]["name"], "gpt-shaped 1.00 B");
  EXPECT_NEAR(j["parameters"].get<double>() / 1e9, 1.0, 0.02);
  auto table = run_cli({"estimate", "--params", "1e9", "--gpus", "8"});
  ASSERT_EQ(table.status, Status::ok) << table.err;
  EXPECT_NE(table.out.find("Plan: gpt-shaped 1.00 B on 8 x"), std::string::npos) << table.out;
  // Model flags still apply on top; --model and --params together are one model too many.
  auto longer = run_cli({"estimate", "--params", "1e9", "--vocab", "32000", "--gpus", "8", "--json"});
  ASSERT_EQ(longer.status, Status::ok) << longer.err;
  EXPECT_EQ(nlohmann::json::parse(longer.out)["plan"]["model"]["vocab"], 32000);
  auto both = run_cli({"estimate", "--params", "1e9", "--model", "gpt3-1.3b"});
  EXPECT_EQ(both.status, Status::invalid_input);
  EXPECT_NE(both.err.find("--params: give --params or --model, not both"), std::string::npos) << both.err;
  auto bad = run_cli({"estimate", "--params", "lots"});
  EXPECT_EQ(bad.status, Status::invalid_input);
  EXPECT_NE(bad.err.find("--params"), std::string::npos) << bad.err;
}

}  // namespace plansight::cli
