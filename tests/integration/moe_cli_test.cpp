// MoE through the CLI: --ep/--etp and the MoE/MLA model flags map to plan fields (and equal the
// library's estimate of the same plan), a Hugging Face MoE config imports as --model, invalid
// expert layouts exit 2 naming the field, and `search --ep` fixes the expert-parallel size.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/cli_run.h"
#include "plansight/cli/commands.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"

namespace plansight::cli {
namespace {

using testing::run_cli;

const std::vector<std::string> kMixtral = {"--model", "mixtral-8x7b", "--system", "dgx-h100", "--gpus", "64", "--pp",
                                           "4", "--zero", "1", "--global-batch", "256", "--seq-len", "4096",
                                           "--attention", "flash"};

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST(MoeCli, EpAndEtpFlagsEqualTheLibrary) {
  auto r = run_cli(with(with({"estimate", "--json"}, kMixtral), {"--ep", "8", "--etp", "1"}));
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["layout"]["ep"], 8);
  EXPECT_EQ(j["plan"]["layout"]["etp"], 1);
  auto plan = estimator::plan_from_json(j["plan"]);
  ASSERT_TRUE(plan.ok()) << plan.error_text();
  auto e = estimator::estimate(*plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  const auto want = estimator::to_json(*e);
  for (const char* key : {"parameters", "active_parameters", "memory", "flops", "time"}) EXPECT_EQ(j[key], want[key]) << key;
  EXPECT_DOUBLE_EQ(j["active_parameters"].get<double>(), 12'879'925'248.0);
  EXPECT_GT(j["time"]["breakdown"]["ep_comm_s"].get<double>(), 0);
}

TEST(MoeCli, ModelFlagsSetExpertFieldsAndKeepTheOthers) {
  auto r = run_cli(with(with({"estimate", "--json"}, kMixtral), {"--top-k", "1", "--load-imbalance", "1.5", "--ep", "8"}));
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["model"]["moe"]["top_k"], 1);
  EXPECT_EQ(j["plan"]["model"]["moe"]["experts"], 8) << "a partial --top-k keeps the preset's experts";
  EXPECT_EQ(j["plan"]["model"]["moe"]["load_imbalance"], 1.5);
  EXPECT_EQ(j["plan"]["model"]["name"], "custom (based on mixtral-8x7b)");
  EXPECT_EQ(j["plan"]["model"]["source"], "mixtral-8x7b with top_k 1");
  // The imbalance and capacity are routing assumptions, not structure: the preset keeps its name.
  auto a = run_cli(with(with({"estimate", "--json"}, kMixtral), {"--load-imbalance", "1.25", "--capacity-factor", "1.1"}));
  ASSERT_EQ(a.status, Status::ok) << a.err;
  EXPECT_EQ(nlohmann::json::parse(a.out)["plan"]["model"]["name"], "mixtral-8x7b");
  // A dense preset made MoE by flags.
  auto d = run_cli({"estimate", "--json", "--model", "llama-2-7b", "--gpus", "8", "--experts", "8", "--top-k", "2",
                    "--expert-ffn-hidden", "11008", "--ep", "8", "--global-batch", "64", "--mfu", "0.4"});
  ASSERT_EQ(d.status, Status::ok) << d.err;
  // Llama 2 7B's 6,738,415,616 with each layer's MLP now one of 8 experts plus a router:
  // + 32 x (7 x 3 x 4096 x 11008 + 8 x 4096).
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(d.out)["parameters"].get<double>(), 37'039'116'288.0);
}

TEST(MoeCli, HuggingFaceMoeConfigAsModel) {
  const std::string cfg = std::string(PLANSIGHT_TEST_DATA_DIR) + "/hf/Qwen3-235B-A22B/config.json";
  auto r = run_cli({"estimate", "--json", "--model", cfg, "--system", "dgx-h100", "--gpus", "256", "--pp", "2", "--ep",
                    "64", "--etp", "1", "--zero", "1", "--global-batch", "512", "--seq-len", "4096", "--mfu", "0.3"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Qwen3-235B-A22B model card: 235B total, 22B activated (tests/unit/hf_config_moe_test.cpp).
  EXPECT_DOUBLE_EQ(j["parameters"].get<double>(), 235'093'634'560.0);
  EXPECT_DOUBLE_EQ(j["active_parameters"].get<double>(), 22'190'763'520.0);
}

TEST(MoeCli, InvalidExpertLayoutExitsTwoNamingTheField) {
  auto r = run_cli(with(with({"estimate", "--json"}, kMixtral), {"--ep", "3"}));
  EXPECT_EQ(r.status, Status::invalid_input);
  EXPECT_EQ(exit_code(r.status), 2);
  EXPECT_NE(r.err.find("layout.ep"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("must divide model.moe.experts (8)"), std::string::npos) << r.err;
  auto dense = run_cli({"estimate", "--ep", "2"});
  EXPECT_EQ(dense.status, Status::invalid_input);
  EXPECT_NE(dense.err.find("needs a model with routed experts"), std::string::npos) << dense.err;
}

TEST(MoeCli, SearchTakesEpAndReportsIt) {
  auto r = run_cli({"search", "--json", "--model", "mixtral-8x7b", "--system", "dgx-h100", "--gpus", "16",
                    "--global-batch", "64", "--seq-len", "4096", "--micro-batch", "1", "--ep", "4", "--top", "2"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["layouts"].empty());
  for (const auto& l : j["layouts"]) EXPECT_EQ(l["layout"]["ep"], 4) << l.dump();
}

}  // namespace
}  // namespace plansight::cli
