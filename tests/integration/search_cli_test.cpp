// `plansight search`: the --json keys documented in search_command.cpp, figures equal to
// `plansight estimate` of the same layout, fixed layout flags, exit statuses for an impossible
// request (names the reason) and for invalid input (names the flag), and the plan flags of
// estimate accepted by every command that takes a plan.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/cli_run.h"
#include "plansight/cli/commands.h"
#include "plansight/cli/plan_args.h"

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
         "closed_form_iteration_s", "closed_form_tokens_per_s", "simulated", "memory", "time", "training_days",
         "gpu_hours", "cost"},
        "layout");
    EXPECT_TRUE(l["simulated"].get<bool>()) << "a 1.3B model's schedules are short";
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

// Issue 17: the default plan's #1 layout (tp 2, pp 8, cp 4, zero 2, standard attention) drew
// the plan's own warnings; with framework rules on, estimate of any ranked layout warns about
// neither, and --no-framework-rules brings it back.
TEST(SearchCli, RankedLayoutsPassTheFrameworkRulesEstimateChecks) {
  auto r = run_cli({"search", "--top", "5", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["request"]["framework_rules"], true);
  EXPECT_EQ(j["request"]["attention"], "standard");
  ASSERT_EQ(j["layouts"].size(), 5u);
  for (const auto& l : j["layouts"]) {
    const auto& c = l["layout"];
    std::vector<std::string> args = {"estimate", "--json", "--tp", std::to_string(c["tp"].get<int>()), "--pp",
                                     std::to_string(c["pp"].get<int>()), "--vpp", std::to_string(c["vpp"].get<int>()),
                                     "--cp", std::to_string(c["cp"].get<int>()), "--zero",
                                     std::to_string(c["zero_stage"].get<int>()), "--micro-batch",
                                     std::to_string(c["micro_batch"].get<int>()), "--recompute",
                                     c["recompute"].get<std::string>(), "--schedule", c["schedule"].get<std::string>()};
    if (c["sequence_parallel"].get<bool>()) args.push_back("--sequence-parallel");
    auto e = run_cli(args);
    ASSERT_EQ(e.status, Status::ok) << e.err;
    for (const auto& w : nlohmann::json::parse(e.out)["warnings"]) {
      const std::string text = w.dump();
      EXPECT_EQ(text.find("layout.cp"), std::string::npos) << text;
      EXPECT_EQ(text.find("layout.zero_stage"), std::string::npos) << text;
    }
  }
  auto off = run_cli({"search", "--top", "1", "--no-framework-rules", "--json"});
  ASSERT_EQ(off.status, Status::ok) << off.err;
  const auto best = nlohmann::json::parse(off.out)["layouts"][0]["layout"];
  EXPECT_GT(best["cp"].get<int>(), 1);
  EXPECT_GE(best["zero_stage"].get<int>(), 2);
}

TEST(SearchCli, LayoutFlagsTakeListsAndRanges) {
  auto r = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "h100-sxm", "--gpus", "16", "--global-batch", "128",
                    "--tp", "2..4", "--pp", "1,2", "--zero", "..1", "--top", "12", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["request"]["constraints"], "tp 2..4, pp 1,2, zero_stage 0,1");
  ASSERT_EQ(j["layouts"].size(), 12u);
  for (const auto& l : j["layouts"]) {
    EXPECT_GE(l["layout"]["tp"].get<int>(), 2);
    EXPECT_LE(l["layout"]["tp"].get<int>(), 4);
    EXPECT_LE(l["layout"]["pp"].get<int>(), 2);
    EXPECT_LE(l["layout"]["zero_stage"].get<int>(), 1);
  }
  auto text = run_cli({"search", "--model", "gpt3-1.3b", "--gpus", "16", "--global-batch", "128", "--tp", "2..4"});
  EXPECT_NE(text.out.find("standard attention; constraints: tp 2..4; framework rules on"), std::string::npos)
      << text.out;
  auto bad = run_cli({"search", "--tp", "2..x"});
  EXPECT_EQ(bad.status, Status::invalid_input);
  EXPECT_NE(bad.err.find("--tp: \"2..x\" is not a range; valid: any, a whole number (8), a list (2,4,8) or a range"),
            std::string::npos)
      << bad.err;
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
  auto zero = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--global-batch", "64",
                       "--zero", "4"});
  EXPECT_EQ(zero.status, Status::invalid_input);
  EXPECT_NE(zero.err.find("--zero"), std::string::npos) << zero.err;
  auto top = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--global-batch", "64",
                      "--top", "0", "--json"});
  EXPECT_EQ(top.status, Status::invalid_input);
  EXPECT_TRUE(nlohmann::json::parse(top.out).contains("errors"));
}

// A value for every plan flag, valid on top of kSmallPlan. A flag added to the table without
// one fails AcceptsEveryFlagEstimateAccepts, so the loop keeps covering the whole table.
const std::map<std::string, std::string>& sample_values() {
  static const std::map<std::string, std::string> values = {
      {"--model", "gpt3-1.3b"}, {"--layers", "24"}, {"--hidden", "2048"}, {"--heads", "16"}, {"--kv-heads", "16"},
      {"--ffn-hidden", "8192"}, {"--vocab", "50304"}, {"--seq-len", "2048"}, {"--gpu", "h100-sxm"},
      {"--system", "dgx-h100"}, {"--gpus", "16"}, {"--gpus-per-node", "8"}, {"--price-per-gpu-hour", "2"}, {"--currency", "EUR"},
      {"--tp", "2"}, {"--pp", "2"}, {"--vpp", "2"}, {"--dp", "4"}, {"--cp", "1"}, {"--zero", "1"},
      {"--recompute", "selective"}, {"--schedule", "1f1b"}, {"--placement", "tp-cp-dp-pp"}, {"--micro-batch", "2"},
      {"--global-batch", "256"}, {"--tokens", "1e9"}, {"--precision", "bf16"}, {"--grad-precision", "fp32"},
      {"--master-precision", "fp32"}, {"--optimizer", "adam"}, {"--attention", "flash"},
      {"--achieved-tflops", "150"}, {"--mfu", "0.4"}, {"--reserve-gib", "2"}, {"--fragmentation", "0.1"},
      {"--vocab-divisible-by", "64"},
      // MoE/MLA fields with the values a dense model has (one alone would half-write an MoE
      // model, which validate() rejects); tests/integration/moe_cli_test.cpp uses real ones.
      {"--experts", "0"}, {"--top-k", "0"}, {"--expert-ffn-hidden", "0"}, {"--shared-experts", "0"},
      {"--shared-expert-ffn-hidden", "0"}, {"--first-dense-layers", "0"}, {"--moe-layer-interval", "1"},
      {"--capacity-factor", "0"}, {"--load-imbalance", "1"}, {"--q-lora-rank", "0"}, {"--kv-lora-rank", "0"},
      {"--qk-nope-head-dim", "0"}, {"--qk-rope-head-dim", "0"}, {"--v-head-dim", "0"}, {"--mtp-modules", "1"},
      {"--ep", "1"}, {"--etp", "1"}, {"--params", "1.3e9"},
      {"--host-link-gb-per-s", "32"}, {"--host-memory-gib", "1024"}, {"--host-memory-gb-per-s", "409.6"}};
  return values;
}

const std::vector<std::string> kSmallPlan = {"--model", "gpt3-1.3b", "--system", "dgx-a100-80gb",
                                             "--gpus",  "16",        "--global-batch", "256"};

// `search` rejected flags `estimate` accepts (--mfu, --achieved-tflops) and required --model,
// --gpus, --global-batch and a GPU even when the default plan or other flags gave them. Every
// command that takes a plan parses the one table (plan_command_flags); this walks estimate's
// table through search (which must succeed), timeline and compare (which must know the flag).
TEST(SearchCli, AcceptsEveryFlagEstimateAccepts) {
  const std::string plan = ::testing::TempDir() + "/search_flags_plan.json";
  std::ofstream(plan) << R"({"model": "gpt3-1.3b", "cluster": {"system": "dgx-a100-80gb", "gpus": 16},
                             "training": {"global_batch": 256}})";
  std::vector<FlagSpec> table = plan_flags();
  table.push_back({"--json", false, ""});
  for (const auto& flag : table) {
    std::vector<std::string> given = {flag.name};
    if (flag.name == "--plan") {
      given.push_back(plan);
    } else if (flag.takes_value) {
      auto it = sample_values().find(flag.name);
      ASSERT_NE(it, sample_values().end()) << "give " << flag.name << " a sample value";
      given.push_back(it->second);
    }
    std::vector<std::string> args = {"search"};
    args.insert(args.end(), kSmallPlan.begin(), kSmallPlan.end());
    if (flag.name == "--params") args.erase(args.begin() + 1, args.begin() + 3);  // a model instead of --model
    args.insert(args.end(), {"--top", "1"});
    args.insert(args.end(), given.begin(), given.end());
    auto r = run_cli(args);
    EXPECT_EQ(r.status, Status::ok) << "search " << flag.name << ": " << r.err;

    for (std::vector<std::string> other : {std::vector<std::string>{"timeline", "--out", ::testing::TempDir() + "/t.json"},
                                           std::vector<std::string>{"compare", "1", "--db", ::testing::TempDir() + "/no_runs.sqlite"}}) {
      other.insert(other.end(), given.begin(), given.end());
      auto o = run_cli(other);
      EXPECT_EQ(o.err.find("unknown option"), std::string::npos) << other[0] << " " << flag.name << ": " << o.err;
    }
  }
}

TEST(SearchCli, TheDefaultPlanNeedsNoFlags) {
  auto r = run_cli({"search", "--top", "1", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["request"]["model"], "gpt3-175b");
  EXPECT_EQ(j["request"]["gpus"], 1024);
  EXPECT_EQ(j["request"]["global_batch"], 1536);
  ASSERT_EQ(j["layouts"].size(), 1u);

  // A whole model given by flags, without --model, on the default cluster and batch.
  auto flags = run_cli({"search", "--layers", "30", "--hidden", "3072", "--heads", "32", "--top", "1", "--json"});
  ASSERT_EQ(flags.status, Status::ok) << flags.err;
  EXPECT_EQ(nlohmann::json::parse(flags.out)["request"]["model"], "custom (based on gpt3-175b)");

  // A given throughput cannot rank layouts: it is taken, and noted as unused.
  auto mfu = run_cli({"search", "--model", "gpt3-1.3b", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--global-batch", "64",
                      "--mfu", "0.5", "--top", "1"});
  EXPECT_EQ(mfu.status, Status::ok) << mfu.err;
  EXPECT_NE(mfu.err.find("warning: --mfu"), std::string::npos) << mfu.err;
}

// --precision takes a list: each precision searched, each layout saying its own.
TEST(SearchCli, PrecisionListSearchesEach) {
  auto r = run_cli({"search", "--model", "llama-2-7b", "--system", "dgx-h100", "--gpus", "16", "--global-batch", "256",
                    "--precision", "bf16,fp8", "--top", "6", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, int> seen;
  for (const auto& l : j["layouts"]) ++seen[l["precision"].get<std::string>()];
  EXPECT_FALSE(seen.empty());
  for (const auto& [name, count] : seen) EXPECT_TRUE(name == "bf16" || name == "fp8") << name;
  EXPECT_NE(j["request"]["constraints"].get<std::string>().find("precision bf16,fp8"), std::string::npos);
  auto a100 = run_cli({"search", "--model", "llama-2-7b", "--system", "dgx-a100-80gb", "--gpus", "16", "--global-batch",
                       "256", "--precision", "bf16,fp8", "--top", "2"});
  ASSERT_EQ(a100.status, Status::ok) << a100.err;
  EXPECT_NE(a100.out.find("precision fp8 not searched: the a100-80gb-sxm has no fp8 peak"), std::string::npos) << a100.out;
  auto bad = run_cli({"search", "--precision", "fp9"});
  EXPECT_NE(bad.status, Status::ok);
  EXPECT_NE(bad.err.find("--precision"), std::string::npos) << bad.err;
}

// Offload flags stay in the searched plan: every layout offloads, as the request says.
TEST(SearchCli, OffloadFlagsAreSearchedNotDropped) {
  auto r = run_cli({"search", "--model", "llama-2-7b", "--system", "dgx-a100-40gb", "--gpus", "8", "--global-batch", "64",
                    "--offload-optimizer", "--top", "2", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  EXPECT_EQ(r.err.find("offload"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["request"]["offload"]["optimizer"].get<bool>());
  ASSERT_FALSE(j["layouts"].empty());
  for (const auto& l : j["layouts"]) EXPECT_GE(l["layout"]["zero_stage"].get<int>(), 1);
}

// --offload LIST: each offloading searched; each layout says its own.
TEST(SearchCli, OffloadListSearchesEach) {
  auto r = run_cli({"search", "--model", "llama-2-7b", "--system", "dgx-a100-40gb", "--gpus", "8", "--global-batch", "64",
                    "--offload", "none,optimizer", "--top", "20", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["request"]["constraints"].get<std::string>().find("offload none,optimizer"), std::string::npos);
  ASSERT_FALSE(j["layouts"].empty());
  for (const auto& l : j["layouts"]) {
    EXPECT_FALSE(l["offload"]["params"].get<bool>());
    // ZeRO-Offload runs with a partitioned optimizer only.
    if (l["offload"]["optimizer"].get<bool>()) {
      EXPECT_GE(l["layout"]["zero_stage"].get<int>(), 1);
    }
  }
  auto bad = run_cli({"search", "--offload", "gpu"});
  EXPECT_NE(bad.status, Status::ok);
  EXPECT_NE(bad.err.find("--offload"), std::string::npos) << bad.err;
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
