// `plansight search`: the --json keys documented in search_command.cpp, figures equal to
// `plansight estimate` of the same layout, fixed layout flags, exit statuses for an impossible
// request (names the reason) and for invalid input (names the flag).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/cli_run.h"
#include "plansight/cli/commands.h"

namespace plansight::cli {
namespace {

using testing::run_cli;

void expect_keys(const nlohmann::json& j, std::initializer_list<const char*> keys, const std::string& where) {
  for (const char* k : keys) EXPECT_TRUE(j.contains(k)) << where << " lacks \"" << k << "\"";
}

const std::vector<std::string> kSmall = {"search", "--model",        "gpt3-1.3b", "--system", "dgx-a100-80gb", "--gpus",
                                         "16",     "--global-batch", "256",       "--tokens", "100e9",         "--top",
                                         "4",      "--json"};

TEST(SearchCli, JsonHasTheDocumentedKeys) {
  auto r = run_cli(kSmall);
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_keys(j, {"request", "search", "rejections", "layouts", "summary"}, "top level");
  expect_keys(j["request"],
              {"model", "gpu", "system", "gpus", "gpus_per_node", "global_batch", "seq_len", "tokens", "top"},
              "request");
  expect_keys(
      j["search"],
      {"enumerated", "evaluated", "fitting", "threads", "closed_form_seconds", "seconds", "layouts_per_s", "simulated"},
      "search");
  ASSERT_EQ(j["layouts"].size(), 4u);
  std::int64_t rejected = 0;
  for (const auto& rej : j["rejections"]) {
    expect_keys(rej, {"reason", "count", "first", "detail", "closest", "closest_bytes"}, "rejection");
    rejected += rej["count"].get<std::int64_t>();
  }
  EXPECT_EQ(rejected + j["search"]["fitting"].get<std::int64_t>(), j["search"]["enumerated"].get<std::int64_t>());
  double previous = 1e300;
  for (const auto& l : j["layouts"]) {
    expect_keys(
        l,
        {"rank", "layout", "micro_batches", "tokens_per_s", "iteration_s", "mfu", "hfu", "achieved_tflops_per_gpu",
         "closed_form_iteration_s", "closed_form_tokens_per_s", "memory", "time", "training_days", "gpu_hours", "cost"},
        "layout");
    expect_keys(
        l["layout"],
        {"tp", "pp", "vpp", "dp", "cp", "micro_batch", "sequence_parallel", "zero_stage", "recompute", "schedule"},
        "layout.layout");
    expect_keys(l["memory"],
                {"most_loaded_stage", "weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
                 "buffers_bytes", "reserve_bytes", "total_bytes", "capacity_bytes"},
                "layout.memory");
    expect_keys(
        l["time"],
        {"compute_s", "tp_comm_s", "cp_comm_s", "pp_comm_s", "dp_comm_s", "bubble_s", "optimizer_s", "bubble_fraction"},
        "layout.time");
    EXPECT_LE(l["memory"]["total_bytes"].get<double>(), l["memory"]["capacity_bytes"].get<double>());
    EXPECT_LE(l["tokens_per_s"].get<double>(), previous * (1 + 1e-4)) << "best first (0.01% is a tie)";
    previous = l["tokens_per_s"].get<double>();
    EXPECT_GT(l["training_days"].get<double>(), 0) << "--tokens given";
    EXPECT_GT(l["cost"].get<double>(), 0) << "the system has a price";
  }
}

TEST(SearchCli, BestLayoutEqualsEstimateOfTheSameLayout) {
  auto r = run_cli(kSmall);
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto best = nlohmann::json::parse(r.out)["layouts"][0];
  const auto& l = best["layout"];
  std::vector<std::string> args = {"estimate", "--json", "--model",        "gpt3-1.3b", "--system", "dgx-a100-80gb",
                                   "--gpus",   "16",     "--global-batch", "256",       "--tokens", "100e9"};
  for (const char* k : {"tp", "pp", "vpp", "dp", "cp"})
    args.insert(args.end(), {"--" + std::string(k), std::to_string(l[k].get<int>())});
  args.insert(args.end(), {"--micro-batch", std::to_string(l["micro_batch"].get<int>()), "--zero",
                           std::to_string(l["zero_stage"].get<int>()), "--recompute", l["recompute"].get<std::string>(),
                           "--schedule", l["schedule"].get<std::string>()});
  if (l["sequence_parallel"].get<bool>()) args.push_back("--sequence-parallel");
  auto e = run_cli(args);
  ASSERT_EQ(e.status, Status::ok) << e.err;
  const auto est = nlohmann::json::parse(e.out);
  EXPECT_DOUBLE_EQ(est["time"]["tokens_per_s"].get<double>(), best["tokens_per_s"].get<double>());
  EXPECT_DOUBLE_EQ(est["memory"]["total_bytes"].get<double>(), best["memory"]["total_bytes"].get<double>());
  EXPECT_DOUBLE_EQ(est["time"]["mfu"].get<double>(), best["mfu"].get<double>());
}

TEST(SearchCli, LayoutFlagsFixTheirDimension) {
  auto r = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "h100-sxm", "--gpus", "16", "--global-batch", "128",
                    "--tp", "2", "--schedule", "1f1b", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["layouts"].empty());
  for (const auto& l : j["layouts"]) {
    EXPECT_EQ(l["layout"]["tp"], 2);
    EXPECT_EQ(l["layout"]["schedule"], "1f1b");
  }
}

TEST(SearchCli, ImpossibleRequestExitsOneAndNamesTheReason) {
  auto r = run_cli(
      {"search", "--model", "gpt3-175b", "--system", "t4-pcie-node", "--gpus", "8", "--global-batch", "64", "--json"});
  EXPECT_EQ(r.status, Status::failure);
  EXPECT_EQ(exit_code(r.status), 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["layouts"].empty());
  EXPECT_NE(j["summary"].get<std::string>().find("does not fit in memory"), std::string::npos);
  EXPECT_NE(r.err.find("no layout fits"), std::string::npos) << r.err;
  auto text =
      run_cli({"search", "--model", "gpt3-175b", "--system", "t4-pcie-node", "--gpus", "8", "--global-batch", "64"});
  EXPECT_NE(text.out.find("does not fit in memory"), std::string::npos) << text.out;
}

TEST(SearchCli, InvalidInputNamesTheFlag) {
  auto missing = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "a100-80gb-sxm", "--gpus", "8"});
  EXPECT_EQ(missing.status, Status::invalid_input);
  EXPECT_NE(missing.err.find("--global-batch"), std::string::npos) << missing.err;
  auto throughput = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "a100-80gb-sxm", "--gpus", "8",
                             "--global-batch", "64", "--mfu", "0.5"});
  EXPECT_EQ(throughput.status, Status::invalid_input);
  EXPECT_NE(throughput.err.find("--mfu"), std::string::npos) << throughput.err;
  auto zero = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--global-batch", "64",
                       "--zero", "4"});
  EXPECT_EQ(zero.status, Status::invalid_input);
  EXPECT_NE(zero.err.find("--zero"), std::string::npos) << zero.err;
  auto top = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--global-batch", "64",
                      "--top", "0", "--json"});
  EXPECT_EQ(top.status, Status::invalid_input);
  EXPECT_TRUE(nlohmann::json::parse(top.out).contains("errors"));
}

TEST(SearchCli, TextReportShowsBreakdowns) {
  auto r = run_cli({"search", "--model", "gpt3-1.3b", "--system", "dgx-a100-80gb", "--gpus", "16", "--global-batch",
                    "256", "--top", "2"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  for (const char* part :
       {"#1 ", "#2 ", "tokens/s", "MFU", "memory, stage", "activations", "time per iteration", "bubble", "layouts/s"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

}  // namespace
}  // namespace plansight::cli
