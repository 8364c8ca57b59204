// Plan JSON: round trips, preset resolution, overlay rules, and malformed input that must give
// errors naming the field (never a crash).
#include <gtest/gtest.h>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

TEST(PlanJson, RoundTripKeepsEveryFieldAndEstimate) {
  Plan p = default_plan();
  p.layout.sequence_parallel = true;
  p.layout.zero_stage = 1;
  p.layout.recompute = Recompute::selective;
  p.training.optimizer = Optimizer::adam8bit;
  p.training.tokens = 1e12;
  p.cluster.price_per_gpu_hour = 2.5;
  const auto json = to_json(p);
  auto back = plan_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(*back), json);
  auto a = estimate(p), b = estimate(*back);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(to_json(*a), to_json(*b));
}

TEST(PlanJson, RoundTripOfACustomModelAndGpu) {
  auto p = parse_plan(R"({"model": {"layers": 4, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "vocab": 1000,
                          "max_seq_len": 512}, "cluster": {"gpu": {"name": "mygpu", "memory_gib": 24,
                          "peak_tflops": {"bf16": 100, "fp16": 100}}, "gpus": 2},
                          "training": {"precision": "bf16", "seq_len": 512, "global_batch": 8, "micro_batch": 2}})");
  ASSERT_TRUE(p.ok()) << p.error_text();
  EXPECT_EQ(p->model.kv_heads, 4) << "kv_heads defaults to heads";
  EXPECT_EQ(p->cluster.gpu.memory_bytes, 24LL << 30);
  EXPECT_EQ(p->layout.tp, 1) << "a new model starts from plain data parallelism";
  EXPECT_EQ(p->dp(), 2);
  auto back = plan_from_json(to_json(*p));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(*back), to_json(*p));
}

TEST(PlanJson, PresetNamesAndOverrides) {
  auto p = parse_plan(R"({"model": {"preset": "llama-2-7b", "layers": 16}, "cluster": {"system": "dgx-h100", "gpus": 16},
                          "layout": {"tp": 2}})");
  ASSERT_TRUE(p.ok()) << p.error_text();
  EXPECT_EQ(p->model.layers, 16);
  EXPECT_EQ(p->model.hidden, 4096);
  EXPECT_EQ(p->cluster.gpu.name, "h100-sxm");
  EXPECT_EQ(p->layout.tp, 2);
  EXPECT_EQ(p->layout.pp, 1);
  EXPECT_EQ(p->dp(), 8);
  EXPECT_EQ(p->training.achieved_tflops, 0) << "the default plan's A100 throughput must not carry over";
}

TEST(PlanJson, OverridingPresetWidthsDerivesTheMlpAndNamesTheModel) {
  auto p = parse_plan(R"({"model": {"preset": "gpt3-175b", "layers": 30, "hidden": 3072, "heads": 32},
                          "layout": {"pp": 2}})");
  ASSERT_TRUE(p.ok()) << p.error_text();
  EXPECT_EQ(p->model.name, "custom (based on gpt3-175b)");
  EXPECT_EQ(p->model.ffn_hidden, 12288);
  EXPECT_EQ(p->layout.tp, 8) << "fields of the default preset changed: the default's layout stays";
  EXPECT_EQ(p->layout.pp, 2);
  auto e = estimate(*p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  // By hand with Narayanan et al. 2021 eq. (2) (12 l h^2 + 13 l h + (V + s) h) plus the final
  // LayerNorm (2h); the derivation is in model_derivation_test.cpp. d_ff kept at 49152: 10.36 B.
  EXPECT_EQ(e->parameters, 3'559'271'424.0);

  auto explicit_ffn = parse_plan(R"({"model": {"preset": "gpt3-175b", "hidden": 3072, "heads": 32,
                                     "ffn_hidden": 49152}})");
  ASSERT_TRUE(explicit_ffn.ok()) << explicit_ffn.error_text();
  EXPECT_EQ(explicit_ffn->model.ffn_hidden, 49152);

  auto gqa = parse_plan(R"({"model": {"preset": "llama-3.1-8b", "heads": 64}})");
  ASSERT_TRUE(gqa.ok()) << gqa.error_text();
  EXPECT_EQ(gqa->model.kv_heads, 8) << "changing heads of a GQA model keeps its KV heads";
  EXPECT_EQ(gqa->model.effective_head_dim(), 64);

  // A written plan reads back as the same model, name included.
  auto back = plan_from_json(to_json(*p));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(back->model), to_json(p->model));
}

// The vocabulary padding multiple is a plan field (Megatron-LM's --make-vocab-size-divisible-by,
// default 128) that reads, writes and round-trips; 0 is rejected by validate().
TEST(PlanJson, VocabularyPaddingRoundTrips) {
  auto p = parse_plan(R"({"model": "gpt2-124m", "cluster": {"gpu": "a100-80gb-sxm", "gpus": 1},
                          "training": {"global_batch": 8, "seq_len": 1024, "vocab_divisible_by": 1}})");
  ASSERT_TRUE(p.ok()) << p.error_text();
  const auto json = to_json(*p);
  EXPECT_EQ(json["training"]["vocab_divisible_by"], 1);
  EXPECT_EQ(to_json(default_plan())["training"]["vocab_divisible_by"], 128);
  auto back = plan_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(*back), json);
  auto e = estimate(*back);
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_EQ(e->padded_vocab, 50257) << "unpadded at TP 1";

  auto zero = parse_plan(R"({"training": {"vocab_divisible_by": 0}})");
  ASSERT_TRUE(zero.ok()) << zero.error_text();
  bool named = false;
  for (const auto& d : validate(*zero)) named = named || d.field == "training.vocab_divisible_by";
  EXPECT_TRUE(named);
}

// The in-place loss reads, writes and round-trips; off by default (Megatron-LM's cross-entropy).
TEST(PlanJson, InPlaceLossRoundTrips) {
  EXPECT_EQ(to_json(default_plan())["training"]["loss_in_place"], false);
  auto p = parse_plan(R"({"training": {"loss_in_place": true}})");
  ASSERT_TRUE(p.ok()) << p.error_text();
  EXPECT_TRUE(p->training.loss_in_place);
  const auto json = to_json(*p);
  EXPECT_EQ(json["training"]["loss_in_place"], true);
  auto back = plan_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(*back), json);
  auto wrong = parse_plan(R"({"training": {"loss_in_place": 3}})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error_text().find("training.loss_in_place"), std::string::npos) << wrong.error_text();
}

TEST(PlanJson, OverridingOneDimensionKeepsTheDefaultLayout) {
  auto p = parse_plan(R"({"layout": {"tp": 4}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->layout.tp, 4);
  EXPECT_EQ(p->layout.pp, 8);
  EXPECT_EQ(p->dp(), 32);
}

TEST(PlanJson, MalformedTextGivesByteOffset) {
  const std::string text = to_json(default_plan()).dump();
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, text.size() / 3, text.size() / 2, text.size() - 1}) {
    auto p = parse_plan(text.substr(0, cut));
    ASSERT_FALSE(p.ok()) << cut;
    EXPECT_EQ(p.errors()[0].field, "plan");
    EXPECT_NE(p.errors()[0].message.find("byte"), std::string::npos) << p.errors()[0].message;
  }
  EXPECT_FALSE(parse_plan("[1, 2]").ok());
  EXPECT_FALSE(parse_plan(R"({"layout": {"tp": 1e400}})").ok());
}

TEST(PlanJson, WrongTypesNameTheField) {
  struct Case { const char* json; const char* field; };
  const Case cases[] = {
      {R"({"layout": {"tp": "two"}})", "layout.tp"},
      {R"({"layout": {"tp": 2.5}})", "layout.tp"},
      {R"({"layout": {"tp": 0}})", "layout.tp"},
      {R"({"layout": {"recompute": "some"}})", "layout.recompute"},
      {R"({"layout": {"stage_layers": [1, "x"]}})", "layout.stage_layers[1]"},
      {R"({"layout": 7})", "layout"},
      {R"({"training": {"precision": 16}})", "training.precision"},
      {R"({"training": {"micro_bacth": 2}})", "training.micro_bacth"},
      {R"({"training": {"mfu": 1.5}})", "training.mfu"},
      {R"({"model": "gpt-9"})", "model"},
      {R"({"model": {"preset": "llama-2-7b", "hidden": -1}})", "model.hidden"},
      {R"({"model": {"preset": "llama-2-7b", "gated_mlp": "yes"}})", "model.gated_mlp"},
      {R"({"cluster": {"gpu": "tpu-v5"}})", "cluster.gpu"},
      {R"({"cluster": {"system": 3}})", "cluster.system"},
      {R"({"cluster": {"gpu": {"peak_tflops": {"bf16": "fast"}}}})", "cluster.gpu.peak_tflops.bf16"},
      {R"({"cluster": {"gpus": -4}})", "cluster.gpus"},
      {R"({"cluster": {"gpus": 9223372036854775808}})", "cluster.gpus"},
      {R"({"colour": "blue"})", "colour"},
      {R"({"layout": {"tp": 4611686018427387904, "pp": 4}})", "layout.tp"},
      {R"({"model": {"preset": "gpt3-175b", "layers": 9007199254740992}})", "model.layers"},
      {R"({"training": {"global_batch": 1099511627777}})", "training.global_batch"},
  };
  for (const auto& c : cases) {
    // Types are the reader's to check, ranges validate()'s: either way the field is named.
    auto p = parse_plan(c.json);
    const std::vector<Diagnostic> errors = p.ok() ? validate(*p) : p.errors();
    ASSERT_TRUE(has_errors(errors)) << c.json;
    bool named = false;
    for (const auto& e : errors) named = named || e.field == c.field;
    EXPECT_TRUE(named) << c.json << " -> " << join_messages(errors);
  }
}

// Readers' open bounds are +-1e308; std::to_string printed them as 309-digit numbers
// ("valid: 0.000000 to 100000000...000.000000").
TEST(PlanJson, GpuEfficienciesComeWithTheGpu) {
  // Presets carry their measured fractions (assets/presets/gpus.json, with sources).
  const GpuSpec a100 = *find_gpu("a100-80gb-sxm");
  EXPECT_DOUBLE_EQ(a100.efficiency.gemm_peak_fraction, 0.85) << "MAMF 271.2 of 312 TFLOP/s";
  EXPECT_DOUBLE_EQ(find_gpu("h100-sxm")->efficiency.nvlink_fraction, 365.0 / 450.0);
  EXPECT_DOUBLE_EQ(find_gpu("a100-80gb-pcie")->efficiency.gemm_peak_fraction, 0.81);
  for (const GpuSpec& g : gpu_presets()) EXPECT_FALSE(g.efficiency.source.empty()) << g.name << " cites its efficiencies";
  EXPECT_DOUBLE_EQ(default_efficiency(a100).gemm_peak_fraction, 0.85);
  // A GPU given by numbers: its own efficiencies, checked and kept through a round trip...
  auto own = parse_plan(R"({"cluster": {"gpu": {"name": "mygpu", "memory_gib": 24, "peak_tflops": {"bf16": 100},
                            "efficiency": {"gemm_peak_fraction": 0.7, "nvlink_fraction": 0.6, "source": "measured"}}}})");
  ASSERT_TRUE(own.ok()) << own.error_text();
  EXPECT_DOUBLE_EQ(own->cluster.gpu.efficiency.gemm_peak_fraction, 0.7);
  EXPECT_DOUBLE_EQ(own->cluster.gpu.efficiency.nvlink_fraction, 0.6);
  auto back = plan_from_json(to_json(*own));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_DOUBLE_EQ(back->cluster.gpu.efficiency.gemm_peak_fraction, 0.7);
  EXPECT_EQ(back->cluster.gpu.efficiency.source, "measured");
  // ...without them, its namesake preset's (plan files written before efficiencies were a GPU
  // field), else the defaults for an unmeasured GPU.
  // Either way the reader says so, naming the field and where its values came from.
  std::vector<Diagnostic> said;
  auto named = parse_plan(R"({"cluster": {"gpu": {"name": "h100-sxm", "memory_gib": 80, "peak_tflops": {"bf16": 989}}}})", &said);
  ASSERT_TRUE(named.ok()) << named.error_text();
  EXPECT_DOUBLE_EQ(named->cluster.gpu.efficiency.flash_forward_fraction, 0.55);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].field, "cluster.gpu.efficiency");
  EXPECT_NE(said[0].message.find("the preset \"h100-sxm\""), std::string::npos) << said[0].message;
  said.clear();
  auto unknown = parse_plan(R"({"cluster": {"gpu": {"name": "mygpu", "memory_gib": 24, "peak_tflops": {"bf16": 100}}}})", &said);
  ASSERT_TRUE(unknown.ok()) << unknown.error_text();
  EXPECT_DOUBLE_EQ(unknown->cluster.gpu.efficiency.gemm_peak_fraction, GpuEfficiency{}.gemm_peak_fraction);
  EXPECT_TRUE(unknown->cluster.gpu.efficiency.source.empty());
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].message.find("no preset is named \"mygpu\""), std::string::npos) << said[0].message;
  said.clear();
  ASSERT_TRUE(parse_plan(R"({"cluster": {"gpu": "h100-sxm"}})", &said).ok());
  ASSERT_TRUE(plan_from_json(to_json(*own), &said).ok());
  EXPECT_TRUE(said.empty()) << "a preset, or a GPU with its efficiencies: nothing to say";
  // Fractions outside (0, 1] name their field.
  auto bad = parse_plan(R"({"cluster": {"gpu": {"efficiency": {"gemm_peak_fraction": 1.5}}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().front().field, "cluster.gpu.efficiency.gemm_peak_fraction");
  EXPECT_NE(bad.errors().front().message.find("valid: 0.01 to 1.0"), std::string::npos) << bad.errors().front().message;
}

// The in-step slowdown is a GPU field: the H100's from its eleven Megatron-Core runs, the A100's
// (and every unmeasured GPU's) 1.15; a plan's own value survives the file; values below 1 (faster
// than alone) or above 5 name the field; efficiencies written before the field existed take their
// namesake preset's.
TEST(PlanJson, InStepSlowdownComesWithTheGpu) {
  EXPECT_DOUBLE_EQ(find_gpu("h100-sxm")->efficiency.in_step_slowdown, 1.25);
  EXPECT_DOUBLE_EQ(find_gpu("a100-80gb-sxm")->efficiency.in_step_slowdown, 1.15);
  EXPECT_DOUBLE_EQ(GpuEfficiency{}.in_step_slowdown, 1.15);
  auto own = parse_plan(R"({"cluster": {"gpu": {"name": "mygpu", "memory_gib": 24, "peak_tflops": {"bf16": 100},
                            "efficiency": {"in_step_slowdown": 1.4, "source": "measured"}}}})");
  ASSERT_TRUE(own.ok()) << own.error_text();
  EXPECT_DOUBLE_EQ(own->cluster.gpu.efficiency.in_step_slowdown, 1.4);
  EXPECT_DOUBLE_EQ(default_efficiency(own->cluster.gpu).in_step_slowdown, 1.4);
  auto back = plan_from_json(to_json(*own));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_DOUBLE_EQ(back->cluster.gpu.efficiency.in_step_slowdown, 1.4);
  for (const char* value : {"0.9", "5.5"}) {
    auto bad = parse_plan(std::string(R"({"cluster": {"gpu": {"efficiency": {"in_step_slowdown": )") + value + "}}}}");
    ASSERT_FALSE(bad.ok()) << value;
    EXPECT_EQ(bad.errors().front().field, "cluster.gpu.efficiency.in_step_slowdown");
    EXPECT_NE(bad.errors().front().message.find("valid: 1.0 to 5.0"), std::string::npos) << bad.errors().front().message;
  }
  // An H100 written out before the field: its efficiencies without it, on a custom system.
  nlohmann::json old = to_json(*parse_plan(R"({"cluster": {"system": "dgx-h100"}})"));
  old["cluster"]["gpu"]["efficiency"].erase("in_step_slowdown");
  old["cluster"]["system"] = "custom";
  std::vector<Diagnostic> said;
  auto read = plan_from_json(old, &said);
  ASSERT_TRUE(read.ok()) << read.error_text();
  EXPECT_DOUBLE_EQ(read->cluster.gpu.efficiency.in_step_slowdown, 1.25) << "the namesake h100-sxm's";
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].field, "cluster.gpu.efficiency.in_step_slowdown");
}

TEST(PlanJson, RangesInMessagesAreShort) {
  struct Case { const char* json; const char* field; const char* valid; };
  const Case cases[] = {
      {R"({"training": {"tokens": -1}})", "training.tokens", "valid: at least 0.0"},
      {R"({"training": {"fragmentation": 2}})", "training.fragmentation", "valid: 0.0 to 0.99"},
      {R"({"cluster": {"gpu": {"memory_gib": -1}}})", "cluster.gpu.memory_gib", "valid: 0.0 to 1000000.0"},
  };
  for (const auto& c : cases) {
    auto p = parse_plan(c.json);
    ASSERT_FALSE(p.ok()) << c.json;
    const auto& e = p.errors().front();
    EXPECT_EQ(e.field, c.field);
    EXPECT_NE(e.message.find(c.valid), std::string::npos) << e.message;
    EXPECT_LT(e.message.size(), 100u) << e.message;
  }
}

TEST(PlanJson, EveryErrorReportedAtOnce) {
  auto p = parse_plan(R"({"layout": {"tp": "x", "pp": 2.5}, "training": {"optimizer": "lion"}})");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.errors().size(), 3u) << p.error_text();
}

TEST(EstimateJson, HasTheContractKeys) {
  auto e = estimate(default_plan());
  ASSERT_TRUE(e.ok());
  const auto j = to_json(*e);
  for (const char* k : {"parameters", "parameters_padded", "memory", "flops", "time", "warnings"}) EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes",
                        "reserve_bytes", "total_bytes", "capacity_bytes", "fits", "stages"}) {
    EXPECT_TRUE(j["memory"].contains(k)) << k;
  }
  EXPECT_EQ(j["memory"]["stages"].size(), 8u);
  for (const char* k : {"model_per_iteration", "hardware_per_iteration"}) EXPECT_TRUE(j["flops"].contains(k)) << k;
  for (const char* k : {"iteration_s", "tokens_per_s", "mfu", "training_days", "gpu_hours", "cost"}) {
    EXPECT_TRUE(j["time"].contains(k)) << k;
  }
}

}  // namespace
}  // namespace plansight::estimator
