// The Hugging Face importer on mixture-of-experts configs: each fixture in tests/data/hf/ was
// written by hand from the model's published config.json on Hugging Face (every key that
// affects the structure kept; quantization and tokenizer ids partly dropped) and must give the
// exact count derived by hand below and the rounded count its model card states. The presets
// of the same models must agree with their imports.
#include <gtest/gtest.h>

#include "hf_config_test_util.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

using namespace hf_test;

struct MoeGolden {
  const char* fixture;
  const char* preset;  // "" when there is no preset
  double total;        // exact, main model (MTP modules excluded)
  double active;       // exact, both embedding tables counted
  double card_total_b, card_active_b;  // the model card's rounded figures, in billions
  bool card_excludes_input_embedding;  // how the card counts active parameters
  double tolerance_b;                  // half a unit of the card's last printed digit
};

// Exact counts by hand, per MoE layer (attention + norms + router + shared experts) plus
// experts; see moe_model_test.cpp for DeepSeek-V3 and Mixtral 8x7B term by term. Sources of
// the rounded figures:
//  DeepSeek-V3: model card "671B total, 37B activated"; README_WEIGHTS.md "36.6B" activated
//    with the output head but not the input embedding.
//  DeepSeek-V2-Lite: model card "15.7B total, 2.4B activated" (27 layers, first dense, 64
//    experts top-6, 2 shared, MLA without q compression).
//  Mixtral 8x7B: Mistral AI "Mixtral of experts": 46.7B total, 12.9B per token.
//  Mixtral 8x22B: Mistral AI "Cheaper, Better, Faster, Stronger": 141B, 39B active.
//  Qwen3-235B-A22B: model card "235B in total and 22B activated".
//  Qwen1.5-MoE-A2.7B: model card "14.3B parameters in total and 2.7B activated".
//  gpt-oss-120b: OpenAI model card (Aug 2025) 116.83B total, 5.13B active (without the
//    embedding table).
//  Llama 4 Scout: Meta model card "17B activated, 109B total" counts the vision encoder too;
//    the text model alone is 107.77B, so its total is checked against the exact count only.
const MoeGolden kMoe[] = {
    {"DeepSeek-V3", "deepseek-v3", 671'026'419'200, 37'552'297'472, 671, 36.6, true, 0.05},
    {"DeepSeek-V2-Lite", "", 15'706'484'224, 2'661'150'208, 15.7, 2.4, true, 0.1},  // 2.45 printed as 2.4
    {"Mixtral-8x7B-v0.1", "mixtral-8x7b", 46'702'792'704, 12'879'925'248, 46.7, 12.9, false, 0.05},
    {"Mixtral-8x22B-v0.1", "mixtral-8x22b", 140'630'071'296, 39'161'468'928, 141, 39, false, 0.5},
    {"Qwen3-235B-A22B", "qwen3-235b-a22b", 235'093'634'560, 22'190'763'520, 235, 22, false, 0.5},
    {"Qwen1.5-MoE-A2.7B", "", 14'315'784'192, 2'689'173'504, 14.3, 2.7, false, 0.05},
    {"gpt-oss-120b", "gpt-oss-120b", 116'829'156'672, 5'711'982'912, 116.83, 5.13, true, 0.005},
    {"Llama-4-Scout-17B-16E", "", 107'769'861'120, 17'172'894'720, 107.77, 17, false, 0.5},
};

TEST(HfConfigMoe, PublishedConfigsGiveTheirModelCardCounts) {
  for (const auto& g : kMoe) {
    const auto r = load(g.fixture);
    ASSERT_TRUE(r.ok()) << g.fixture << ": " << r.error_text();
    const ParameterCounts c = count_parameters(*r);
    EXPECT_DOUBLE_EQ(c.main_model(), g.total) << g.fixture;
    EXPECT_DOUBLE_EQ(c.active, g.active) << g.fixture;
    EXPECT_NEAR(c.main_model() / 1e9, g.card_total_b, g.tolerance_b) << g.fixture;
    const double active = g.card_excludes_input_embedding ? c.active_without_input_embedding() : c.active;
    EXPECT_NEAR(active / 1e9, g.card_active_b, g.tolerance_b) << g.fixture;
  }
}

TEST(HfConfigMoe, PresetsAgreeWithTheirConfigs) {
  for (const auto& g : kMoe) {
    if (std::string(g.preset).empty()) continue;
    const auto preset = find_model(g.preset);
    ASSERT_TRUE(preset.ok()) << g.preset << ": " << preset.error_text();
    const auto imported = load(g.fixture);
    ASSERT_TRUE(imported.ok()) << imported.error_text();
    EXPECT_DOUBLE_EQ(count_parameters(*preset).total, count_parameters(*imported).total) << g.preset;
    EXPECT_DOUBLE_EQ(count_parameters(*preset).active, count_parameters(*imported).active) << g.preset;
    MoeSpec preset_moe = preset->moe, imported_moe = imported->moe;  // compare effective shared widths
    preset_moe.shared_expert_ffn_hidden = preset_moe.effective_shared_ffn_hidden();
    imported_moe.shared_expert_ffn_hidden = imported_moe.effective_shared_ffn_hidden();
    EXPECT_TRUE(preset_moe == imported_moe) << g.preset;
    EXPECT_TRUE(preset->mla == imported->mla) << g.preset;
    EXPECT_EQ(preset->mtp_modules, imported->mtp_modules) << g.preset;
    EXPECT_FALSE(preset->source.empty());
  }
}

TEST(HfConfigMoe, DeepSeekV3FieldsAndItsMtpModule) {
  const auto r = load("DeepSeek-V3");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->source, "Hugging Face config.json (model_type deepseek_v3)");
  EXPECT_EQ(r->moe.first_dense_layers, 3);
  EXPECT_EQ(r->moe.shared_experts, 1);
  EXPECT_TRUE(r->moe.router_score_bias);
  EXPECT_EQ(r->mla.q_lora_rank, 1536);
  EXPECT_EQ(r->mla.kv_lora_rank, 512);
  EXPECT_EQ(r->mtp_modules, 1);
  // README_WEIGHTS.md: the MTP module has "11.5B unique parameters"; by hand 11,610,068,224.
  EXPECT_DOUBLE_EQ(count_parameters(*r).mtp, 11'610'068'224.0);
}

TEST(HfConfigMoe, QLoraRankNullMeansAFullQueryProjection) {
  const auto r = load("DeepSeek-V2-Lite");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->mla.q_lora_rank, 0);
  EXPECT_FALSE(r->moe.router_score_bias) << "V2's gate has no e_score_correction_bias";
  EXPECT_EQ(r->mtp_modules, 0);
}

TEST(HfConfigMoe, Qwen2MoeHasAGatedSharedExpertAndQkvBias) {
  const auto r = load("Qwen1.5-MoE-A2.7B");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->moe.shared_experts, 1);
  EXPECT_EQ(r->moe.shared_expert_ffn_hidden, 5632);
  EXPECT_TRUE(r->moe.shared_expert_gate);
  EXPECT_TRUE(r->qkv_bias);
  EXPECT_FALSE(r->attention_out_bias);
}

TEST(HfConfigMoe, Llama4ReadsTextConfigAndInterleavesMoeLayers) {
  auto config = fixture("Llama-4-Scout-17B-16E");
  config["text_config"]["interleave_moe_layer_step"] = 2;  // Maverick's layout
  const auto r = from(config);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(count_parameters(*r).moe_layers, 24);
  EXPECT_EQ(count_parameters(*r).dense_layers, 24);
  EXPECT_EQ(r->ffn_hidden, 16384) << "dense layers use intermediate_size_mlp";
  config["text_config"]["moe_layers"] = {0, 2, 4};
  const auto bad = from(config);
  EXPECT_EQ(error_field(bad), "text_config.moe_layers");
  config.erase("text_config");
  EXPECT_EQ(error_field(from(config)), "text_config");
}

TEST(HfConfigMoe, QwenDenseLayerPrefixAndUnsupportedLists) {
  auto config = fixture("Qwen3-235B-A22B");
  config["mlp_only_layers"] = {0, 1};
  auto r = from(config);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->moe.first_dense_layers, 2);
  EXPECT_EQ(count_parameters(*r).dense_layers, 2);
  config["mlp_only_layers"] = {5};
  r = from(config);
  EXPECT_EQ(error_field(r), "mlp_only_layers");
  EXPECT_NE(error_message(r).find("valid: [] or the first layers"), std::string::npos) << error_message(r);
}

TEST(HfConfigMoe, MissingExpertKeysAreNamed) {
  auto config = fixture("Qwen3-235B-A22B");
  config.erase("moe_intermediate_size");
  EXPECT_EQ(error_field(from(config)), "moe_intermediate_size");
  config = fixture("DeepSeek-V3");
  config.erase("kv_lora_rank");
  EXPECT_EQ(error_field(from(config)), "kv_lora_rank");
  config = fixture("DeepSeek-V3");
  config["moe_layer_freq"] = 2;
  const auto r = from(config);
  EXPECT_EQ(error_field(r), "moe_layer_freq");
  EXPECT_EQ(error_message(r), "value 2 is not supported; valid: 1");
  config = fixture("Mixtral-8x7B-v0.1");
  config["num_local_experts"] = "eight";
  EXPECT_EQ(error_field(from(config)), "num_local_experts");
}

TEST(HfConfigMoe, AbsentOptionalKeysTakeTransformersDefaults) {
  auto config = fixture("Mixtral-8x7B-v0.1");
  config.erase("num_local_experts");
  config.erase("num_experts_per_tok");
  config.erase("num_key_value_heads");
  const auto r = from(config);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->moe.experts, 8);  // MixtralConfig defaults
  EXPECT_EQ(r->moe.top_k, 2);
  EXPECT_EQ(r->kv_heads, 8);
  config = fixture("gpt-oss-120b");
  config.erase("attention_bias");
  const auto oss = from(config);
  ASSERT_TRUE(oss.ok()) << oss.error_text();
  EXPECT_TRUE(oss->qkv_bias) << "GptOssConfig attention_bias defaults to True";
}

}  // namespace
}  // namespace plansight::estimator
