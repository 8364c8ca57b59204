// Overriding fields of a preset: derived fields (MLP width, KV heads of multi-head attention,
// head dimension) follow the fields they derive from unless given, the edited model is named
// after its preset, and plan files get exactly that rule (they go through read_model).
#include <gtest/gtest.h>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/model_derivation.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

ModelSpec preset(const char* name) {
  auto m = find_model(name);
  EXPECT_TRUE(m.ok()) << name;
  return *m;
}

// GPT-3 175B (96 x 12288, 96 heads, d_ff 49152) cut to 30 layers of 3072 with 32 heads, as in
// the report `plansight estimate --layers 30 --hidden 3072 --heads 32`. By hand, with
// Narayanan et al. 2021 eq. (2), P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h))
//   = 12 l h^2 + 13 l h + (V + s) h, for l = 30, h = 3072, V = 50257, s = 2048:
//   12 * 30 * 3072^2 = 3,397,386,240;  13 * 30 * 3072 = 1,198,080;
//   (50257 + 2048) * 3072 = 160,680,960;  sum 3,559,265,280,
// plus the final LayerNorm's weight and bias (2h = 6,144) that eq. (2) leaves out:
// 3,559,271,424 (3.56 B). Keeping GPT-3's d_ff = 49152 instead gave 10,355,149,824 (10.4 B).
constexpr double kThirtyLayerParameters = 3'559'271'424.0;

TEST(ModelDerivation, HiddenAndHeadsOnAPresetCarryTheMlpAndKvHeads) {
  const ModelSpec base = preset("gpt3-175b");
  ModelSpec edited = base;
  edited.layers = 30;
  edited.hidden = 3072;
  edited.heads = 32;
  const ModelSpec m = derive_model(base, edited, {});
  EXPECT_EQ(m.ffn_hidden, 4 * 3072) << "GPT-3's d_ff = 4 d_model (Brown et al. 2020, Sec. 2.1)";
  EXPECT_EQ(m.kv_heads, 32) << "multi-head attention stays multi-head";
  EXPECT_EQ(m.effective_head_dim(), 96);
  EXPECT_EQ(m.name, "custom (based on gpt3-175b)");
  EXPECT_NE(m.source.find("gpt3-175b"), std::string::npos) << m.source;
  EXPECT_EQ(count_parameters(m).total, kThirtyLayerParameters);
}

TEST(ModelDerivation, ExplicitFieldsWin) {
  const ModelSpec base = preset("gpt3-175b");
  ModelSpec edited = base;
  edited.hidden = 3072;
  edited.heads = 32;
  edited.ffn_hidden = 10000;
  edited.kv_heads = 8;
  edited.name = "mine";
  const ModelSpec m = derive_model(base, edited, {.name = true, .kv_heads = true, .ffn_hidden = true});
  EXPECT_EQ(m.ffn_hidden, 10000);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.name, "mine");
}

TEST(ModelDerivation, GatedMlpKeepsItsRatioAndGqaKeepsItsKvHeads) {
  // Llama 3.1 8B: hidden 4096, 32 heads, 8 KV heads, d_ff 14336 = 3.5 h.
  const ModelSpec base = preset("llama-3.1-8b");
  ModelSpec edited = base;
  edited.hidden = 2048;
  edited.heads = 16;
  const ModelSpec m = derive_model(base, edited, {});
  EXPECT_EQ(m.ffn_hidden, 7168);
  EXPECT_EQ(m.kv_heads, 8) << "Llama 3 keeps 8 KV heads at every size";
  EXPECT_EQ(m.effective_head_dim(), 128);
}

TEST(ModelDerivation, AnExplicitHeadDimIsKeptAndTheSameStructureKeepsTheName) {
  ModelSpec base = preset("gpt3-175b");
  base.head_dim = 256;  // not hidden / heads: given, so never derived
  ModelSpec edited = base;
  edited.hidden = 6144;
  EXPECT_EQ(derive_model(base, edited, {}).head_dim, 256);

  const ModelSpec same = derive_model(preset("gpt3-175b"), preset("gpt3-175b"), {});
  EXPECT_EQ(same.name, "gpt3-175b") << "values equal to the preset's leave it the preset";
  EXPECT_EQ(custom_model_name("custom (based on gpt2)"), "custom (based on gpt2)") << "never nested";
}

}  // namespace
}  // namespace plansight::estimator
