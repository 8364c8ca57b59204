// The CLI contract: `estimate --json` keys and values equal the library's estimate, flags map
// to plan fields, invalid input gives status invalid_input (exit 2) with every error named,
// and config.json import works end to end.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../support/cli_run.h"
#include "plansight/cli/commands.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"

namespace plansight::cli {
namespace {

using testing::run_cli;

TEST(Cli, EstimateJsonEqualsLibraryEstimate) {
  auto r = run_cli({"estimate", "--json", "--achieved-tflops", "140"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto plan = estimator::default_plan();
  plan.training.achieved_tflops = 140;
  auto expected = estimator::estimate(plan);
  ASSERT_TRUE(expected.ok());
  auto want = estimator::to_json(*expected);
  for (const char* key : {"parameters", "parameters_padded", "memory", "flops", "time"}) EXPECT_EQ(j[key], want[key]) << key;
  EXPECT_EQ(j["parameters"].get<double>(), 174604259328.0);
  // Narayanan et al. 2021, Sec. 5.1 after eq. (4): 175B, 300B tokens, 1024 A100 at 140 TFLOP/s
  // train in "about 34 days" (whole days: [33.5, 34.5)). Eq. (4), 8TP/(nX), approximates the
  // FLOPs per token by 8P; the CLI charges eq. (3)'s exact FLOPs, 96lh^2 (1 + s/6h + V/16lh) per
  // token, 3% more, and prints 34.7 days. Checked as eq. (3) by hand and, scaled back to 8P, as 34.
  const double days = j["time"]["training_days"].get<double>();
  const double l = 96, h = 12288, s = 2048, V = 51200;  // V: 50257 padded to 8 x 128 (Megatron)
  const double eq3_flops_per_token = 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(days, 300e9 * eq3_flops_per_token / (1024 * 140e12) / 86400, 1e-9 * days);
  const double eq4_flops_per_token = 8 * j["parameters"].get<double>();
  EXPECT_NEAR(days * eq4_flops_per_token / eq3_flops_per_token, 34.0, 0.5) << "the paper's 34 days";
}

// The predicted breakdown's communication volume per group, in the JSON and the text report.
TEST(Cli, EstimateReportsTheBytesEachGroupSends) {
  auto r = run_cli({"estimate", "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto expected = estimator::estimate(estimator::default_plan());
  ASSERT_TRUE(expected.ok());
  const auto& b = expected->time.breakdown;
  const auto& sent = j["time"]["communication_bytes"];
  EXPECT_EQ(sent["tp"].get<double>(), b.tp_bytes);
  EXPECT_EQ(sent["pp"].get<double>(), b.pp_bytes);
  EXPECT_EQ(sent["dp"].get<double>(), b.dp_bytes);
  EXPECT_FALSE(sent.contains("ep")) << "a dense model has no expert traffic";
  auto text = run_cli({"estimate", "--zero", "3"});
  ASSERT_EQ(text.status, Status::ok) << text.err;
  EXPECT_NE(text.out.find("  sent per GPU         TP "), std::string::npos) << text.out;
}

TEST(Cli, FlagsChangeThePlan) {
  auto r = run_cli({"estimate", "--json", "--model", "llama-2-7b", "--system", "dgx-h100", "--gpus", "16", "--tp", "2",
                    "--zero", "1", "--precision", "bf16", "--attention", "flash", "--global-batch", "64", "--seq-len",
                    "4096", "--mfu", "0.4", "--tokens", "2e12"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["layout"]["tp"], 2);
  EXPECT_EQ(j["dp"], 8);
  EXPECT_EQ(j["plan"]["cluster"]["gpu"]["name"], "h100-sxm");
  EXPECT_EQ(j["plan"]["training"]["grad_precision"], "bf16") << "gradients follow --precision unless given";
  EXPECT_NEAR(j["time"]["mfu"].get<double>(), 0.4, 1e-12);
  EXPECT_GT(j["time"]["training_days"].get<double>(), 0);
}

// The offload flags reach the plan, the host figures come from the system preset (or the flag),
// and the estimate reports host memory per node and the exposed offload time.
TEST(Cli, OffloadFlags) {
  const std::vector<std::string> base = {"estimate", "--json", "--model", "gpt3-1.3b", "--system", "dgx-a100-80gb",
                                         "--gpus", "8", "--global-batch", "32", "--zero", "2"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  auto r = with({"--offload-optimizer", "--offload-activations", "--host-link-gb-per-s", "16"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["layout"]["offload_optimizer"], true);
  EXPECT_EQ(j["plan"]["layout"]["offload_activations"], true);
  EXPECT_DOUBLE_EQ(j["plan"]["cluster"]["host_link_gb_per_s"].get<double>(), 16);
  EXPECT_DOUBLE_EQ(j["plan"]["cluster"]["host_memory_gb_per_s"].get<double>(), 409.6) << "from the preset";
  EXPECT_GT(j["memory"]["host"]["bytes_per_node"].get<double>(), 0);
  EXPECT_EQ(j["memory"]["optimizer_bytes"].get<double>(), 0);
  EXPECT_GT(j["time"]["breakdown"]["offload_s"].get<double>(), 0);

  auto table = run_cli({"estimate", "--model", "gpt3-1.3b", "--system", "dgx-a100-80gb", "--gpus", "8", "--global-batch",
                        "32", "--zero", "2", "--offload-optimizer"});
  ASSERT_EQ(table.status, Status::ok) << table.err;
  EXPECT_NE(table.out.find("host memory per node"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("exposed offload"), std::string::npos) << table.out;

  auto params = with({"--offload-params"});
  EXPECT_EQ(params.status, Status::invalid_input);
  EXPECT_NE((params.out + params.err).find("layout.offload_params"), std::string::npos) << params.err;
  auto link = with({"--offload-optimizer", "--host-link-gb-per-s", "0"});
  EXPECT_EQ(link.status, Status::invalid_input);
  EXPECT_NE((link.out + link.err).find("cluster.host_link_gb_per_s"), std::string::npos) << link.err;
}

TEST(Cli, VirtualStagesImplyInterleaving) {
  auto r = run_cli({"estimate", "--json", "--vpp", "2"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["plan"]["layout"]["schedule"], "interleaved");
}

TEST(Cli, InvalidInputListsEveryErrorWithItsField) {
  auto r = run_cli({"estimate", "--tp", "5", "--micro-batch", "0", "--json"});
  EXPECT_EQ(r.status, Status::invalid_input);
  EXPECT_EQ(exit_code(r.status), 2);
  EXPECT_NE(r.err.find("layout.tp"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("errors"));
  EXPECT_GE(j["errors"].size(), 2u);
}

TEST(Cli, BadFlagsAndValues) {
  EXPECT_EQ(run_cli({"estimate", "--tpp", "2"}).status, Status::invalid_input);
  auto r = run_cli({"estimate", "--tp", "two"});
  EXPECT_EQ(r.status, Status::invalid_input);
  EXPECT_NE(r.err.find("--tp"), std::string::npos);
  EXPECT_NE(run_cli({"estimate", "--tp"}).err.find("needs a value"), std::string::npos);
  EXPECT_EQ(run_cli({"estimate", "--model", "gpt-9"}).status, Status::invalid_input);
  EXPECT_EQ(run_cli({"estimate", "--plan", "/nonexistent/plan.json"}).status, Status::invalid_input);
  EXPECT_EQ(run_cli({"frobnicate"}).status, Status::invalid_input);
}

TEST(Cli, PlanFileThenFlags) {
  const std::string path = ::testing::TempDir() + "/plan_cli_test.json";
  std::ofstream(path) << R"({"model": "llama-3.1-8b", "cluster": {"system": "dgx-h100", "gpus": 8},
                            "training": {"precision": "bf16", "global_batch": 32, "seq_len": 8192}})";
  auto r = run_cli({"estimate", "--json", "--plan", path, "--tp", "2"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["model"]["name"], "llama-3.1-8b");
  EXPECT_EQ(j["dp"], 4);
  std::ofstream(path) << "{\"model\": ";
  auto bad = run_cli({"estimate", "--plan", path});
  EXPECT_EQ(bad.status, Status::invalid_input);
  EXPECT_NE(bad.err.find("byte"), std::string::npos) << bad.err;
}

TEST(Cli, HuggingFaceConfigAsModel) {
  const std::string cfg = std::string(PLANSIGHT_TEST_DATA_DIR) + "/hf/Llama-2-70b-hf/config.json";
  auto r = run_cli({"import-model", cfg, "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["parameters"].get<double>(), 68976648192.0);
  auto e = run_cli({"estimate", "--json", "--model", cfg, "--gpu", "h100-sxm", "--gpus", "64", "--tp", "8", "--pp", "2",
                    "--global-batch", "64", "--seq-len", "4096", "--precision", "bf16"});
  ASSERT_EQ(e.status, Status::ok) << e.err;
  EXPECT_EQ(nlohmann::json::parse(e.out)["parameters"].get<double>(), 68976648192.0);
}

// `estimate --layers 30 --hidden 3072 --heads 32` on the default GPT-3 175B kept its d_ff of
// 49152 and its name: 10.36 B parameters reported as "gpt3-175b". The MLP follows the hidden
// size (4h), and the model is named after its preset. 3,559,271,424 by hand: Narayanan et al.
// 2021 eq. (2), 12 l h^2 + 13 l h + (V + s) h = 3,559,265,280, plus the final LayerNorm's 2h
// (tests/unit/model_derivation_test.cpp spells out the terms). PP 2 because the default's PP 8
// does not divide 30 layers.
TEST(Cli, ModelFlagsOnAPresetDeriveTheMlpAndNameTheModel) {
  const std::vector<std::string> flags = {"--layers", "30", "--hidden", "3072", "--heads", "32", "--pp", "2"};
  std::vector<std::string> args = {"estimate", "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  auto r = run_cli(args);
  ASSERT_EQ(r.status, Status::ok) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parameters"].get<double>(), 3559271424.0);
  EXPECT_EQ(j["plan"]["model"]["ffn_hidden"], 12288);
  EXPECT_EQ(j["plan"]["model"]["name"], "custom (based on gpt3-175b)");
  EXPECT_EQ(j["plan"]["layout"]["tp"], 8) << "overriding fields keeps the plan's layout";

  auto table = run_cli({"estimate", "--layers", "30", "--hidden", "3072", "--heads", "32", "--pp", "2"});
  ASSERT_EQ(table.status, Status::ok) << table.err;
  EXPECT_NE(table.out.find("Plan: custom (based on gpt3-175b)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("3.56 B (3,559,271,424)"), std::string::npos) << table.out;

  // The same flags on a plan file whose model is a whole object (as the app saves it), and on
  // a Hugging Face config.json, derive the same way: the file's ffn_hidden is the base's, not
  // one the user set.
  const std::string path = ::testing::TempDir() + "/plan_model_flags_test.json";
  std::ofstream(path) << nlohmann::json{{"model", estimator::to_json(estimator::default_plan().model)}}.dump();
  args = {"estimate", "--json", "--plan", path};
  args.insert(args.end(), flags.begin(), flags.end());
  auto from_file = run_cli(args);
  ASSERT_EQ(from_file.status, Status::ok) << from_file.err;
  j = nlohmann::json::parse(from_file.out);
  EXPECT_EQ(j["parameters"].get<double>(), 3559271424.0);
  EXPECT_EQ(j["plan"]["model"]["name"], "custom (based on gpt3-175b)");

  const std::string cfg = std::string(PLANSIGHT_TEST_DATA_DIR) + "/hf/Llama-3.1-8B/config.json";
  const std::vector<std::string> llama = {"--hidden", "2048", "--heads", "16", "--gpu", "h100-sxm", "--gpus", "8",
                                          "--global-batch", "8", "--json"};
  args = {"estimate", "--model", cfg};
  args.insert(args.end(), llama.begin(), llama.end());
  auto hf = run_cli(args);
  args = {"estimate", "--model", "llama-3.1-8b"};
  args.insert(args.end(), llama.begin(), llama.end());
  auto preset = run_cli(args);
  ASSERT_EQ(hf.status, Status::ok) << hf.err;
  ASSERT_EQ(preset.status, Status::ok) << preset.err;
  const auto a = nlohmann::json::parse(hf.out), b = nlohmann::json::parse(preset.out);
  EXPECT_EQ(a["plan"]["model"]["ffn_hidden"], 7168) << "Llama's 3.5 h";
  EXPECT_EQ(a["plan"]["model"]["kv_heads"], 8);
  EXPECT_EQ(a["parameters"], b["parameters"]) << "config.json and preset give the same model";
  EXPECT_EQ(a["plan"]["model"]["name"], "custom (based on Llama-3.1-8B)");
}

// The vocabulary was always padded to 128 x TP, so a lecture's "50257 -> 50304" demonstration
// showed no difference. The padding is training.vocab_divisible_by (Megatron-LM's
// --make-vocab-size-divisible-by, default 128), and an unpadded vocabulary is costed as the GPU
// runs it. GPT-2 124M (tied embeddings, h = 768) on one A100, bf16, batch 8 x 1024:
//   padded (default 128):  50257 -> 50304; parameters 124,439,808, as trained
//                          124,439,808 + (50304 - 50257) x 768 = 124,475,904 (one tied matrix);
//   unpadded (1):          50257 as trained, 124,439,808;
//   vocab 50304, unpadded: 124,475,904; every hardware cost equals the padded 50257's, so the
//                          predicted iteration is identical,
// and the unpadded 50257 is slower: its LM-head GEMMs have N or K = 50257, whose rows of
// 100,514 bytes miss Tensor Cores' 16-byte alignment (device_model.cpp: half rate; NVIDIA's
// Matrix Multiplication Background User's Guide, Sec. 2.2), while the tile counts at 50257 and
// 50304 are the same (ceil(n / 64, 128, 256) = 786, 393, 197 for both).
TEST(Cli, VocabularyPaddingIsAPlanField) {
  const std::vector<std::string> base = {"estimate",     "--json",   "--model", "gpt2-124m",   "--gpu",
                                         "a100-80gb-sxm", "--gpus",  "1",       "--global-batch", "8",
                                         "--micro-batch", "8",       "--seq-len", "1024",      "--precision",
                                         "bf16",          "--attention", "flash"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_cli(args);
    EXPECT_EQ(r.status, Status::ok) << r.err;
    return r.status == Status::ok ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  };
  const auto padded = run({});
  const auto unpadded = run({"--vocab-divisible-by", "1"});
  const auto wider = run({"--vocab", "50304", "--vocab-divisible-by", "1"});
  ASSERT_FALSE(padded.empty() || unpadded.empty() || wider.empty());

  EXPECT_EQ(padded["plan"]["training"]["vocab_divisible_by"], 128) << "Megatron-LM's default";
  EXPECT_EQ(padded["padded_vocab"], 50304);
  EXPECT_EQ(padded["parameters"].get<double>(), 124439808.0);
  EXPECT_EQ(padded["parameters_padded"].get<double>(), 124475904.0);
  EXPECT_EQ(padded["parameters_padded"].get<double>() - padded["parameters"].get<double>(), (50304.0 - 50257.0) * 768);

  EXPECT_EQ(unpadded["plan"]["training"]["vocab_divisible_by"], 1);
  EXPECT_EQ(unpadded["padded_vocab"], 50257);
  EXPECT_EQ(unpadded["parameters_padded"].get<double>(), 124439808.0);

  EXPECT_EQ(wider["padded_vocab"], 50304);
  EXPECT_EQ(wider["parameters"].get<double>(), 124475904.0);
  EXPECT_EQ(wider["time"]["iteration_s"], padded["time"]["iteration_s"]) << "padding 50257 costs what 50304 costs";
  EXPECT_EQ(wider["memory"]["total_bytes"], padded["memory"]["total_bytes"]);
  EXPECT_GT(unpadded["time"]["iteration_s"].get<double>(), 1.1 * padded["time"]["iteration_s"].get<double>())
      << "the unaligned LM head runs at half rate";

  // The same request as a plan file, and the resolved plan fed back, give the same estimate.
  const std::string path = ::testing::TempDir() + "/plan_vocab_padding.json";
  std::ofstream(path) << unpadded["plan"].dump();
  auto back = run_cli({"estimate", "--json", "--plan", path});
  ASSERT_EQ(back.status, Status::ok) << back.err;
  const auto again = nlohmann::json::parse(back.out);
  EXPECT_EQ(again["plan"], unpadded["plan"]);
  EXPECT_EQ(again["time"], unpadded["time"]);
  EXPECT_EQ(again["padded_vocab"], 50257);

  auto table = run_cli({"estimate", "--model", "gpt2-124m", "--gpus", "1", "--global-batch", "8", "--seq-len", "1024",
                        "--vocab-divisible-by", "1"});
  EXPECT_EQ(table.status, Status::ok) << table.err;
  EXPECT_NE(table.out.find("the vocabulary unpadded (50,257)"), std::string::npos) << table.out;
  EXPECT_EQ(run_cli({"estimate", "--vocab-divisible-by", "0"}).status, Status::invalid_input);
}

// Bytes that are not UTF-8 (a Latin-1 terminal, a mangled path) went into error messages that
// --json writes as JSON: nlohmann::json threw type_error 316 and main() exited 1 with an
// internal error. They are written as U+FFFD, and the answer is exit 2 with "errors".
TEST(Cli, ATimelineTooLongToBuildIsRefusedWithTheLimit) {
  // dp 16: 10,001 micro-batches x pp 8 x (F, B) = 160,016 ops, past estimator::kMaxTimelineOps;
  // the estimate of the same plan answers.
  auto r = run_cli({"timeline", "--ascii", "--global-batch", "160016"});
  EXPECT_EQ(r.status, Status::invalid_input);
  EXPECT_NE(r.err.find("training.global_batch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at most 10000 micro-batches"), std::string::npos) << r.err;
  auto e = run_cli({"estimate", "--global-batch", "160016", "--json"});
  EXPECT_EQ(e.status, Status::ok) << e.err;
}

// --per-layer: the same iteration with each op laid out layer by layer; every collective of the
// 24 layers of a stage is its own span, named with its layer, group and link.
TEST(Cli, TimelinePerLayerShowsEveryCollective) {
  const std::vector<std::string> plan = {"--pp", "4", "--global-batch", "128", "--recompute", "none"};
  auto plain_args = plan, layered_args = plan;
  plain_args.insert(plain_args.begin(), {"timeline", "--json"});
  layered_args.insert(layered_args.begin(), {"timeline", "--json", "--per-layer"});
  auto plain = run_cli(plain_args);
  auto layered = run_cli(layered_args);
  ASSERT_EQ(plain.status, Status::ok) << plain.err;
  ASSERT_EQ(layered.status, Status::ok) << layered.err;
  const auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(layered.out);
  const auto count = [](const nlohmann::json& t, const std::string& part) {
    std::size_t n = 0;
    for (const auto& name : t["names"]) n += name.get<std::string>().find(part) != std::string::npos ? 1 : 0;
    return n;
  };
  EXPECT_EQ(count(a, "layer 24 TP all-reduce"), 0u);
  EXPECT_EQ(count(b, "layer 24 TP all-reduce · tp 8 · in a node"), 1u);  // one name, many spans
  EXPECT_EQ(count(b, " TP all-reduce · tp 8"), 96u + 1u);  // every layer's, and the embedding's
  auto spans = [](const nlohmann::json& t) {
    std::size_t n = 0;
    for (const auto& track : t["tracks"]) n += track["spans"].size();
    return n;
  };
  EXPECT_GT(spans(b), 20 * spans(a));
  EXPECT_EQ(b["plan"], a["plan"]);

  auto refused = run_cli({"timeline", "--per-layer", "--global-batch", "160016"});
  EXPECT_EQ(refused.status, Status::invalid_input);
}

// --format perfetto: the predicted timeline (here per layer) as Chrome trace-event JSON, the
// form `export RUN` writes for stored runs: one complete event per span.
TEST(Cli, TimelineWritesPerfettoJson) {
  const std::string path = ::testing::TempDir() + "/predicted.trace.json";
  auto r = run_cli({"timeline", "--per-layer", "--pp", "4", "--global-batch", "128", "--recompute", "none", "--format",
                    "perfetto", "--out", path});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  std::ifstream file(path);
  const auto trace = nlohmann::json::parse(file);
  std::size_t complete = 0, collectives = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    ++complete;
    collectives += e.value("name", "").rfind("layer 24 TP all-reduce", 0) == 0 ? 1 : 0;
  }
  EXPECT_NE(r.out.find("wrote "), std::string::npos) << r.out;
  const auto spans = std::stoull(r.out.substr(r.out.find("wrote ") + 6));
  EXPECT_EQ(complete, spans);
  EXPECT_EQ(collectives, 4u * 4);  // 2 per layer in the forward and in the backward; 128 / dp 32 = 4 micro-batches

  auto no_file = run_cli({"timeline", "--format", "perfetto"});
  EXPECT_EQ(no_file.status, Status::invalid_input);
  EXPECT_NE(no_file.err.find("--out"), std::string::npos) << no_file.err;
  auto unknown = run_cli({"timeline", "--format", "xml", "--out", path});
  EXPECT_EQ(unknown.status, Status::invalid_input);
  EXPECT_NE(unknown.err.find("valid: plansight"), std::string::npos) << unknown.err;
}

TEST(Cli, NonUtf8InputWithJsonGivesErrors) {
  const std::string latin1 = "gpt\xe9";  // "gpté" in ISO-8859-1
  const std::vector<std::vector<std::string>> requests = {
      {"estimate", "--json", "--model", latin1},
      {"estimate", "--json", "--recompute", latin1},
      {"search", "--json", "--model", latin1},
      {"timeline", "--json", "--schedule", latin1},
      {"estimate", "--json", "--" + latin1}};
  for (const auto& args : requests) {
    testing::CliRun r;
    ASSERT_NO_THROW(r = run_cli(args)) << args[2];
    EXPECT_EQ(exit_code(r.status), 2) << args[2] << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("errors")) << r.out;
    EXPECT_NE(r.out.find("\xef\xbf\xbd"), std::string::npos) << "the stray byte is shown as U+FFFD: " << r.out;
  }
  const std::string path = ::testing::TempDir() + "/plan_latin1.json";
  std::ofstream(path) << "{\"model\": \"" << latin1 << "\"}";
  auto file = run_cli({"estimate", "--json", "--plan", path});
  EXPECT_EQ(exit_code(file.status), 2) << file.err;
  EXPECT_TRUE(nlohmann::json::parse(file.out, nullptr, false).contains("errors")) << file.out;
}

// strtod read "--gpus 0x10" as 16 (hexadecimal), and " 16", "inf" and "nan" passed where a count
// or a number was asked for. Decimal only, with 3e11-style exponents for whole counts.
TEST(Cli, NumbersAreDecimal) {
  for (const auto& [flag, text] : std::vector<std::pair<std::string, std::string>>{
           {"--gpus", "0x10"}, {"--gpus", " 16"}, {"--gpus", "16 "}, {"--tp", "+0x8"}, {"--mfu", "0x0.8p0"},
           {"--tokens", "inf"}, {"--mfu", "nan"}, {"--gpus", "1e"}, {"--gpus", "."}}) {
    auto r = run_cli({"estimate", flag, text});
    EXPECT_EQ(r.status, Status::invalid_input) << flag << " " << text;
    EXPECT_NE(r.err.find(flag + ": expected a"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"" + text + "\""), std::string::npos) << r.err;
  }
  auto scientific = run_cli({"estimate", "--json", "--tokens", "3e11", "--gpus", "1.024e3", "--global-batch", "2.048e3",
                             "--mfu", ".5"});
  ASSERT_EQ(scientific.status, Status::ok) << scientific.err;
  const auto j = nlohmann::json::parse(scientific.out);
  EXPECT_EQ(j["plan"]["cluster"]["gpus"], 1024);
  EXPECT_EQ(j["plan"]["training"]["global_batch"], 2048);
  EXPECT_EQ(j["plan"]["training"]["tokens"].get<double>(), 3e11);
  EXPECT_EQ(j["plan"]["training"]["mfu"].get<double>(), 0.5);
}

// A directory given as --plan read as an empty file ("not valid JSON at byte 0"); --model DIR
// takes a Hugging Face model folder's config.json, and names a folder without one.
TEST(Cli, DirectoriesAsPlanAndModel) {
  auto plan = run_cli({"estimate", "--plan", ::testing::TempDir()});
  EXPECT_EQ(plan.status, Status::invalid_input);
  EXPECT_NE(plan.err.find("--plan: \"" + ::testing::TempDir() + "\" is a directory"), std::string::npos) << plan.err;

  const std::string folder = std::string(PLANSIGHT_TEST_DATA_DIR) + "/hf/Llama-3.1-8B";
  auto model = run_cli({"estimate", "--json", "--model", folder, "--gpu", "h100-sxm", "--gpus", "8", "--global-batch", "8"});
  ASSERT_EQ(model.status, Status::ok) << model.err;
  const auto j = nlohmann::json::parse(model.out);
  EXPECT_EQ(j["parameters"].get<double>(), 8030261248.0) << "Llama 3.1 8B, as from its config.json";
  EXPECT_EQ(j["plan"]["model"]["name"], "Llama-3.1-8B");
  auto with_slash = run_cli({"estimate", "--json", "--model", folder + "/", "--gpu", "h100-sxm", "--gpus", "8",
                             "--global-batch", "8"});
  ASSERT_EQ(with_slash.status, Status::ok) << with_slash.err;
  EXPECT_EQ(nlohmann::json::parse(with_slash.out)["plan"]["model"]["name"], "Llama-3.1-8B");

  auto empty = run_cli({"estimate", "--model", std::string(PLANSIGHT_TEST_DATA_DIR) + "/hf"});
  EXPECT_EQ(empty.status, Status::invalid_input);
  EXPECT_NE(empty.err.find("is a directory without a config.json"), std::string::npos) << empty.err;
}

TEST(Cli, TablesNameUnits) {
  auto r = run_cli({"estimate"});
  ASSERT_EQ(r.status, Status::ok);
  for (const char* s : {"GiB", "TFLOP/s", "days", "GPU-hours", "stage", "fits"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
  for (const char* cmd : {"models", "gpus", "systems"}) {
    auto list = run_cli({cmd});
    EXPECT_EQ(list.status, Status::ok) << cmd;
    EXPECT_GT(std::count(list.out.begin(), list.out.end(), '\n'), 8) << cmd;
    auto json = run_cli({cmd, "--json"});
    EXPECT_TRUE(nlohmann::json::parse(json.out).is_array()) << cmd;
  }
}

}  // namespace
}  // namespace plansight::cli
