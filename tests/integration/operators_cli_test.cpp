// `plansight operators`: the JSON keys and values equal the library's operator report (the time
// model's own costs), the text table lists the default plan's GEMMs with their shapes, plan flags
// change the rows, and bad flags or a MoE layer of a dense model exit with invalid_input and name
// the flag.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/cli_run.h"
#include "plansight/estimator/operator_report.h"
#include "plansight/estimator/presets.h"

namespace plansight::cli {
namespace {

using testing::run_cli;

TEST(OperatorsCli, JsonKeysAndValuesAreTheLibrarysReport) {
  auto r = run_cli({"operators", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"gpu", "precision", "roofline", "layer_kind", "padded_vocab", "operators", "layer", "lm_head", "plan"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  auto report = estimator::operator_report(estimator::default_plan());
  ASSERT_TRUE(report);
  EXPECT_EQ(j["gpu"], "a100-80gb-sxm");
  EXPECT_EQ(j["layer_kind"], "dense");
  EXPECT_DOUBLE_EQ(j["roofline"]["ridge_flops_per_byte"].get<double>(), report->roofline.ridge_flops_per_byte());
  ASSERT_EQ(j["operators"].size(), report->rows.size());
  for (const char* key : {"block", "name", "pass", "class", "gemm", "flops", "matmul_flops", "bytes", "intensity_flops_per_byte",
                          "seconds", "bound", "achieved_flops_per_s", "attainable_flops_per_s", "share"}) {
    EXPECT_TRUE(j["operators"][0].contains(key)) << key;
  }
  const auto& qkv = j["operators"][1];
  EXPECT_EQ(qkv["name"], "QKV");
  EXPECT_EQ(qkv["pass"], "forward");
  EXPECT_EQ(qkv["bound"], "compute");
  EXPECT_EQ(qkv["gemm"]["n"].get<double>(), 4608.0);
  EXPECT_EQ(qkv["flops"].get<double>(), 231'928'233'984.0);
  EXPECT_EQ(qkv["seconds"].get<double>(), report->rows[1].op.seconds);
  // Its tiling, as the time model costs it: 2048 x 4608 on 108 SMs.
  const auto& tiling = report->rows[1].tiling;
  EXPECT_EQ(qkv["gemm"]["tiles"].get<double>(), tiling.tiles);
  EXPECT_EQ(qkv["gemm"]["waves"].get<double>(), tiling.waves);
  EXPECT_EQ(qkv["gemm"]["tile"], (nlohmann::json{tiling.tile_rows, tiling.tile_cols}));
  EXPECT_EQ(qkv["gemm"]["aligned"], true);
  EXPECT_TRUE(j["operators"][0]["gemm"].is_null()) << "a norm has no GEMM shape";
  EXPECT_EQ(j["operators"][0]["bound"], "memory");
  // The operators add up to the time model's compute of the layer.
  double sum = 0;
  for (const auto& op : j["operators"]) {
    if (op["block"] == "layer") sum += op["seconds"].get<double>();
  }
  EXPECT_NEAR(sum, j["layer"]["time_model"]["compute_s"].get<double>(), 1e-12);
  EXPECT_GT(j["layer"]["time_model"]["tp_comm_s"].get<double>(), 0) << "TP 8 all-reduces beside the operators";
}

TEST(OperatorsCli, TableAndPlanFlags) {
  auto r = run_cli({"operators"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  EXPECT_NE(r.out.find("ridge point 153.0 FLOP/byte"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("QKV                     fwd     2048 x 4608 x 12288"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scores Q K^T            fwd     2048 x 2048 x 128 (x12)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LM head on the last stage (vocabulary 51200 / TP 8)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  tile     waves  fill\n"), std::string::npos) << r.out;
  // A hidden size off the 16-byte alignment is marked.
  auto odd = run_cli({"operators", "--hidden", "12296", "--heads", "8"});  // 1537-wide heads: 3074 bytes
  ASSERT_EQ(odd.status, Status::ok) << odd.err;
  EXPECT_NE(odd.out.find("2048 x 4611 x 12296"), std::string::npos) << odd.out;
  EXPECT_NE(odd.out.find("256x128!"), std::string::npos) << odd.out;

  // Flash attention and TP 4 with sequence parallelism: one attention kernel, wider GEMMs,
  // norms over a quarter of the tokens.
  auto flash = run_cli({"operators", "--json", "--attention", "flash", "--tp", "4", "--sequence-parallel"});
  ASSERT_EQ(flash.status, Status::ok) << flash.err;
  const auto j = nlohmann::json::parse(flash.out);
  bool has_flash = false, has_scores = false;
  for (const auto& op : j["operators"]) {
    has_flash |= op["name"] == "flash attention";
    has_scores |= op["name"] == "scores Q K^T";
    if (op["name"] == "QKV" && op["pass"] == "forward") {
      EXPECT_EQ(op["gemm"]["n"].get<double>(), 3 * 12288.0 / 4);
    }
    if (op["name"] == "norm (attention)" && op["pass"] == "forward") {
      EXPECT_EQ(op["bytes"].get<double>(), 2048 / 4 * 12288 * 2 * 2.0);
    }
  }
  EXPECT_TRUE(has_flash);
  EXPECT_FALSE(has_scores);

  auto moe = run_cli({"operators", "--json", "--model", "mixtral-8x7b", "--system", "dgx-h100", "--gpus", "64", "--tp", "2",
                      "--ep", "4", "--sequence-parallel", "--pp", "1", "--global-batch", "256"});
  ASSERT_EQ(moe.status, Status::ok) << moe.err;
  const auto m = nlohmann::json::parse(moe.out);
  EXPECT_EQ(m["layer_kind"], "moe");
  bool grouped = false;
  for (const auto& op : m["operators"]) grouped |= op["name"] == "experts FC1 (grouped)" && op["gemm"]["batch"].get<double>() == 2.0;
  EXPECT_TRUE(grouped) << "8 experts over EP 4: two local experts per grouped GEMM";
}

TEST(OperatorsCli, BadInputNamesTheFlag) {
  auto bad = run_cli({"operators", "--layer", "sparse"});
  EXPECT_EQ(bad.status, Status::invalid_input);
  EXPECT_NE(bad.err.find("--layer: value \"sparse\" is invalid; valid: dense, moe"), std::string::npos) << bad.err;

  auto unknown = run_cli({"operators", "--bogus", "--json"});
  EXPECT_EQ(unknown.status, Status::invalid_input);
  EXPECT_NE(unknown.err.find("--bogus"), std::string::npos) << unknown.err;
  const auto j = nlohmann::json::parse(unknown.out);
  ASSERT_TRUE(j.contains("errors"));
  EXPECT_EQ(j["errors"][0]["field"], "--bogus");

  auto moe_of_dense = run_cli({"operators", "--layer", "moe"});
  EXPECT_EQ(moe_of_dense.status, Status::invalid_input);
  EXPECT_NE(moe_of_dense.err.find("no MoE layers"), std::string::npos) << moe_of_dense.err;

  auto invalid = run_cli({"operators", "--tp", "3"});
  EXPECT_EQ(invalid.status, Status::invalid_input);
  EXPECT_NE(invalid.err.find("cluster.gpus"), std::string::npos) << invalid.err;
}

}  // namespace
}  // namespace plansight::cli
