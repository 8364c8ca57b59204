// MoE, MLA and MTP model fields: exact parameter counts (total and active) derived by hand from
// the published configs, properties that tie the MoE counts to the dense ones, validation
// errors naming field, value and valid range, and the plan JSON round trip.
#include <gtest/gtest.h>

#include "../support/moe_models.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

using testing::deepseek_v3;
using testing::mixtral_8x7b;

// DeepSeek-V3 by hand (h 7168, 128 heads, MLA ranks 1536/512, head dims 128+64/128):
//   MLA 7168*1536 + 1536 + 1536*128*192 + 7168*576 + 512 + 512*128*256 + 128*128*7168 = 187,107,328
//   dense layer: MLA + 2 norms 14,336 + MLP 3*7168*18432 = 583,483,392
//   MoE layer outside routed experts: MLA + norms + router 7168*256 + bias 256 + shared expert
//     3*7168*2048 = 232,997,120; one routed expert 44,040,192
//   total: 3 dense + 58 * (232,997,120 + 256 * 44,040,192) + 2 * 129280*7168 + 7168 = 671,026,419,200
//   active: 58 * (232,997,120 + 8 * 44,040,192) + 3 dense + embeddings + norm = 37,552,297,472
// The model card states 671B total and 37B activated (huggingface.co/deepseek-ai/DeepSeek-V3,
// "Model Summary"); README_WEIGHTS.md states 36.6B activated counting the output head but not
// the input embedding: 37,552,297,472 - 926,679,040 = 36,625,618,432. Its one MTP module adds
// 2*7168^2 + 3*7168 + one MoE layer = 11,610,068,224 ("11.5B unique parameters", README_WEIGHTS.md).
TEST(MoeParameters, DeepSeekV3MatchesTheModelCard) {
  const ParameterCounts c = count_parameters(deepseek_v3());
  EXPECT_EQ(c.dense_layers, 3);
  EXPECT_EQ(c.moe_layers, 58);
  EXPECT_DOUBLE_EQ(attention_parameters(deepseek_v3()).total(), 187'107'328.0);
  EXPECT_DOUBLE_EQ(c.layer.total(), 583'483'392.0);
  EXPECT_DOUBLE_EQ(c.moe_layer.total(), 232'997'120.0);
  EXPECT_DOUBLE_EQ(c.routed_expert, 44'040'192.0);
  EXPECT_DOUBLE_EQ(c.main_model(), 671'026'419'200.0);
  EXPECT_DOUBLE_EQ(c.active, 37'552'297'472.0);
  EXPECT_DOUBLE_EQ(c.active_without_input_embedding(), 36'625'618'432.0);
  EXPECT_DOUBLE_EQ(c.mtp, 11'610'068'224.0);
  // A token uses 8 of the MTP layer's 256 experts: 102,781,952 + 232,997,120 + 8 x 44,040,192.
  EXPECT_DOUBLE_EQ(c.mtp_active, 688'100'608.0);
  EXPECT_DOUBLE_EQ(c.total, 671'026'419'200.0 + 11'610'068'224.0);
  EXPECT_NEAR(c.main_model() / 1e9, 671, 0.5);                       // card: 671B
  EXPECT_NEAR(c.active_without_input_embedding() / 1e9, 36.6, 0.05);  // README_WEIGHTS.md: 36.6B
}

// Mixtral 8x7B by hand: attention 2*4096^2 + 2*4096*1024 = 41,943,040, norms 8192, router
// 8*4096, experts 8 * 3*4096*14336; x32 + 2*32000*4096 + 4096 = 46,702,792,704 total and
// 32 * (41,943,040 + 8192 + 32,768 + 2 * 176,160,768) + 262,148,096 = 12,879,925,248 active.
// Model card / Mistral AI's announcement "Mixtral of experts" (Dec 2023): 46.7B total, 12.9B per token.
TEST(MoeParameters, Mixtral8x7bMatchesTheAnnouncement) {
  const ParameterCounts c = count_parameters(mixtral_8x7b());
  EXPECT_DOUBLE_EQ(c.total, 46'702'792'704.0);
  EXPECT_DOUBLE_EQ(c.active, 12'879'925'248.0);
  EXPECT_NEAR(c.total / 1e9, 46.7, 0.05);
  EXPECT_NEAR(c.active / 1e9, 12.9, 0.05);
}

TEST(MoeParameters, OneExpertOfTheMlpWidthIsTheDenseModelPlusItsRouter) {
  ModelSpec dense = testing::llama_style(8, 1024, 16, 4, 2816, 32000);
  ModelSpec moe = dense;
  moe.moe.experts = 1;
  moe.moe.top_k = 1;
  moe.moe.expert_ffn_hidden = dense.ffn_hidden;
  const double router = 8.0 * 1024;
  EXPECT_DOUBLE_EQ(count_parameters(moe).total, count_parameters(dense).total + router);
  EXPECT_DOUBLE_EQ(count_parameters(moe).active, count_parameters(moe).total);
}

TEST(MoeParameters, ActiveGrowsWithTopKAndTotalWithExperts) {
  ModelSpec m = mixtral_8x7b();
  const ParameterCounts base = count_parameters(m);
  m.moe.top_k = 3;
  const ParameterCounts more_active = count_parameters(m);
  EXPECT_DOUBLE_EQ(more_active.total, base.total);
  EXPECT_DOUBLE_EQ(more_active.active - base.active, 32 * base.routed_expert);
  m.moe.experts = 16;
  EXPECT_DOUBLE_EQ(count_parameters(m).total - base.total, 32 * (8 * base.routed_expert + 8 * 4096.0));
}

TEST(MoeParameters, LayerIntervalAndFirstDenseLayersPickTheMoeLayers) {
  ModelSpec m = mixtral_8x7b();
  m.layers = 10;
  m.moe.layer_interval = 2;  // Llama 4 Maverick's interleave_moe_layer_step: layers 1, 3, 5, ...
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_EQ(m.moe_layers_in(0, 10), 5);
  m.moe.first_dense_layers = 3;  // then layers 4, 6, 8
  EXPECT_FALSE(m.is_moe_layer(3));
  EXPECT_TRUE(m.is_moe_layer(4));
  EXPECT_EQ(m.moe_layers_in(0, 10), 3);
  EXPECT_EQ(count_parameters(m).moe_layers, 3);
  EXPECT_EQ(count_parameters(m).dense_layers, 7);
}

TEST(MoeParameters, MlaWithoutQueryCompressionUsesAFullQueryProjection) {
  // DeepSeek-V2-Lite's attention (q_lora_rank null): q_proj 2048 x 16*192, kv_a 2048 x (512+64),
  // kv_a_layernorm 512, kv_b 512 x 16*(128+128), o_proj 16*128 x 2048.
  ModelSpec m = testing::llama_style(1, 2048, 16, 16, 10944, 102400);
  m.mla = {.q_lora_rank = 0, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128};
  const double expected = 2048.0 * 3072 + 2048.0 * 576 + 512 + 512.0 * 4096 + 2048.0 * 2048;
  EXPECT_DOUBLE_EQ(attention_parameters(m).total(), expected);
}

TEST(MoeParameters, DenseModelsKeepTheirCounts) {
  // GPT-3 175B: Narayanan et al. 2021 eq. (2) gives 174.56B with V 51200, s 2048.
  ModelSpec m = testing::llama_style(96, 12288, 96, 96, 4 * 12288, 51200);
  const ParameterCounts c = count_parameters(m);
  EXPECT_EQ(c.moe_layers, 0);
  EXPECT_EQ(c.dense_layers, 96);
  EXPECT_DOUBLE_EQ(c.active, c.total);
  EXPECT_DOUBLE_EQ(c.mtp, 0);
}

// Validation: each bad field is named with its value and the valid range.
std::string first_error(const ModelSpec& m, const std::string& field) {
  Plan p = default_plan();
  p.model = m;
  for (const auto& d : validate(p)) {
    if (d.severity == Severity::error && d.field == field) return d.message;
  }
  return "<no error on " + field + ">";
}

TEST(MoeValidation, ErrorsNameFieldValueAndValidRange) {
  ModelSpec m = mixtral_8x7b();
  m.moe.top_k = 9;
  EXPECT_EQ(first_error(m, "model.moe.top_k"), "value 9 is invalid; valid: a whole number from 1 to 8");
  m = mixtral_8x7b();
  m.moe.load_imbalance = 0.5;
  EXPECT_NE(first_error(m, "model.moe.load_imbalance").find("value 0.5 is invalid; valid: 1.0 to 4.0"), std::string::npos);
  m.moe.load_imbalance = 4.0;  // every token on the same two of eight experts: the largest possible
  EXPECT_EQ(first_error(m, "model.moe.load_imbalance"), "<no error on model.moe.load_imbalance>");
  m = mixtral_8x7b();
  m.moe.capacity_factor = -1;
  EXPECT_EQ(first_error(m, "model.moe.capacity_factor"), "value -1.0 is invalid; valid: 0 (dropless) or a positive factor");
  m = mixtral_8x7b();
  m.moe.expert_ffn_hidden = 0;
  EXPECT_EQ(first_error(m, "model.moe.expert_ffn_hidden"), "value 0 is invalid; valid: a whole number from 1 to 1073741824");
  m = mixtral_8x7b();
  m.moe.first_dense_layers = 40;
  EXPECT_EQ(first_error(m, "model.moe.first_dense_layers"), "value 40 is invalid; valid: a whole number from 0 to 32");
}

TEST(MoeValidation, HalfWrittenMoeOrMlaIsAnError) {
  ModelSpec m = testing::llama_style(8, 1024, 16, 4, 2816, 32000);
  m.moe.top_k = 2;
  EXPECT_NE(first_error(m, "model.moe.experts").find("value 0 but top_k"), std::string::npos);
  m = testing::llama_style(8, 1024, 16, 4, 2816, 32000);
  m.mla.v_head_dim = 128;
  EXPECT_NE(first_error(m, "model.mla.kv_lora_rank").find("value 0 but other mla fields are set"), std::string::npos);
  m = deepseek_v3();
  m.mla.qk_rope_head_dim = 0;
  EXPECT_EQ(first_error(m, "model.mla.qk_rope_head_dim"), "value 0 is invalid; valid: a whole number from 1 to 1073741824");
  m = deepseek_v3();
  m.mtp_modules = -1;
  EXPECT_EQ(first_error(m, "model.mtp_modules"), "value -1 is invalid; valid: a whole number from 0 to 16");
}

TEST(MoeValidation, PublishedModelsAreValid) {
  for (const ModelSpec& m : {deepseek_v3(), mixtral_8x7b()}) {
    Plan p = default_plan();
    p.model = m;
    for (const auto& d : validate(p)) {
      EXPECT_FALSE(d.field.rfind("model.", 0) == 0 && d.severity == Severity::error) << m.name << ": " << d.to_string();
    }
  }
}

TEST(MoeJson, ModelRoundTripKeepsEveryMoeMlaAndMtpField) {
  ModelSpec m = deepseek_v3();
  m.moe.capacity_factor = 1.25;
  m.moe.load_imbalance = 1.5;
  m.moe.layer_interval = 2;
  m.moe.shared_expert_gate = true;
  m.moe.router_bias = true;
  m.qk_norm = true;
  m.attention_sinks = true;
  const nlohmann::json json = to_json(m);
  std::vector<Diagnostic> errors;
  JsonReader reader(json, "model", errors);
  ModelSpec back;
  read_model(reader, back);
  ASSERT_TRUE(errors.empty()) << join_messages(errors);
  EXPECT_EQ(back.moe.experts, 256);
  EXPECT_EQ(back.moe.shared_expert_ffn_hidden, 2048) << "written as its effective width";
  back.moe.shared_expert_ffn_hidden = 0;
  EXPECT_TRUE(back.moe == m.moe);
  EXPECT_TRUE(back.mla == m.mla);
  EXPECT_EQ(back.mtp_modules, 1);
  EXPECT_TRUE(back.qk_norm && back.attention_sinks);
  EXPECT_EQ(to_json(back), json);
}

TEST(MoeJson, DenseModelsWriteNoMoeFields) {
  const nlohmann::json json = to_json(testing::llama_style(8, 1024, 16, 4, 2816, 32000));
  EXPECT_FALSE(json.contains("moe"));
  EXPECT_FALSE(json.contains("mla"));
  EXPECT_FALSE(json.contains("mtp_modules"));
}

TEST(MoeJson, MistypedAndUnknownMoeFieldsAreNamed) {
  auto p = parse_plan(R"({"model": {"preset": "llama-2-7b", "moe": {"experts": "eight", "topk": 2}}})");
  ASSERT_FALSE(p.ok());
  const std::string text = p.error_text();
  EXPECT_NE(text.find("model.moe.experts"), std::string::npos) << text;
  EXPECT_NE(text.find("model.moe.topk"), std::string::npos) << text;
}

}  // namespace
}  // namespace plansight::estimator
