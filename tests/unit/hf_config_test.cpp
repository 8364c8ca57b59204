// Tests of the Hugging Face config.json importer on good input: the published configs of eight
// models (copies in tests/data/hf/<model>/config.json) give their published or hand-derived
// parameter counts, and absent keys take the defaults of transformers' configuration classes.
// Error paths are in hf_config_errors_test.cpp.
#include "plansight/estimator/hf_config.h"

#include <cstdint>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hf_config_test_util.h"
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

using namespace hf_test;

// Exact while the count stays below 2^53 (count_parameters sums in double).
std::int64_t total_parameters(const ModelSpec& m) { return static_cast<std::int64_t>(count_parameters(m).total); }

struct Golden {
  const char* model;
  std::int64_t parameters;
};

// Sources of the counts:
//  Llama-2-70b-hf 68,976,648,192 and Llama-3.1-8B 8,030,261,248: the exact published totals of
//    the meta-llama checkpoints (model cards: 70B, 8B); by hand, 70B per layer 2*8192^2
//    + 2*8192*1024 + 3*8192*28672 + 2*8192 = 855,654,400; x80 + 2*32000*8192 + 8192.
//  Mistral-7B-v0.1 7,241,732,096: model card's 7.24B; by hand, per layer q,o 2*4096^2 + k,v
//    2*4096*1024 + MLP 3*4096*14336 + norms 2*4096 = 218,112,000; x32 + 2*32000*4096 + 4096.
//  Qwen2-7B 7,615,616,512: model card's 7.62B; by hand, per layer q 3584^2+3584, k,v
//    2*(3584*512+512), o 3584^2, MLP 3*3584*18944, norms 2*3584 = 233,057,792; x28
//    + 2*152064*3584 + 3584.
//  gpt2 124,439,808: the 124M GPT-2 with tied embeddings (Radford et al. 2019; llm.c's count).
//  pythia-1.4b 1,414,647,808: "total params" column of the Pythia README (EleutherAI/pythia).
//  falcon-7b 6,921,720,704: by hand from FalconForCausalLM's modules, tied lm_head (model card:
//    "7B"); per layer query_key_value 4544*(4544+2*64) + dense 4544^2 + MLP 2*4544*18176
//    + one LayerNorm 2*4544 = 207,070,080; x32 + 65024*4544 + ln_f 2*4544.
//  falcon-40b 41,303,293,952: same method (model card: "40B"); per layer query_key_value
//    8192*(128+2*8)*64 + dense 8192^2 + MLP 2*8192*32768 + ln_attn, ln_mlp 4*8192 = 679,510,016;
//    x60 + 65024*8192 + ln_f 2*8192.
const Golden kGolden[] = {
    {"Llama-2-70b-hf", 68'976'648'192}, {"Llama-3.1-8B", 8'030'261'248}, {"Mistral-7B-v0.1", 7'241'732'096},
    {"Qwen2-7B", 7'615'616'512},        {"gpt2", 124'439'808},           {"pythia-1.4b", 1'414'647'808},
    {"falcon-7b", 6'921'720'704},       {"falcon-40b", 41'303'293'952},
};

TEST(HfConfig, PublishedConfigsGiveTheirParameterCounts) {
  for (const auto& g : kGolden) {
    const auto r = load(g.model);
    ASSERT_TRUE(r.ok()) << g.model << ": " << r.error_text();
    EXPECT_EQ(r->name, g.model);
    EXPECT_EQ(total_parameters(*r), g.parameters) << g.model;
  }
}

TEST(HfConfig, Llama2_70bIsGqaWithRmsNormAndSwiGlu) {
  const auto r = load("Llama-2-70b-hf");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->source, "Hugging Face config.json (model_type llama)");
  EXPECT_EQ(r->layers, 80);
  EXPECT_EQ(r->hidden, 8192);
  EXPECT_EQ(r->heads, 64);
  EXPECT_EQ(r->kv_heads, 8);
  EXPECT_EQ(r->effective_head_dim(), 128);
  EXPECT_EQ(r->ffn_hidden, 28672);
  EXPECT_EQ(r->vocab, 32000);
  EXPECT_EQ(r->max_seq_len, 4096);
  EXPECT_TRUE(r->gated_mlp);
  EXPECT_FALSE(r->tied_embeddings);
  EXPECT_EQ(r->norm, NormKind::rms_norm);
  EXPECT_EQ(r->norms_per_layer, 2);
  EXPECT_EQ(r->position, PositionKind::rope);
  EXPECT_FALSE(r->qkv_bias || r->attention_out_bias || r->mlp_bias);
  EXPECT_FALSE(r->dropout);
}

TEST(HfConfig, Qwen2HasBiasOnQkvOnly) {
  const auto r = load("Qwen2-7B");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_TRUE(r->qkv_bias);
  EXPECT_FALSE(r->attention_out_bias);
  EXPECT_FALSE(r->mlp_bias);
  EXPECT_EQ(r->kv_heads, 4);
  EXPECT_EQ(r->max_seq_len, 131072);
}

TEST(HfConfig, Gpt2HasLearnedPositionsLayerNormBiasesAndDropout) {
  const auto r = load("gpt2");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->position, PositionKind::learned);
  EXPECT_EQ(r->max_seq_len, 1024);
  EXPECT_EQ(r->ffn_hidden, 3072);  // n_inner absent: 4 * n_embd
  EXPECT_EQ(r->kv_heads, 12);
  EXPECT_TRUE(r->tied_embeddings);
  EXPECT_EQ(r->norm, NormKind::layer_norm);
  EXPECT_TRUE(r->norm_bias);
  EXPECT_TRUE(r->qkv_bias && r->attention_out_bias && r->mlp_bias);
  EXPECT_FALSE(r->gated_mlp);
  EXPECT_TRUE(r->dropout);  // resid_pdrop = attn_pdrop = 0.1
}

TEST(HfConfig, PythiaIsUntiedRotaryWithTwoNormsDespiteParallelResidual) {
  const auto r = load("pythia-1.4b");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->norms_per_layer, 2);
  EXPECT_FALSE(r->tied_embeddings);
  EXPECT_EQ(r->position, PositionKind::rope);
  EXPECT_EQ(r->ffn_hidden, 8192);
  EXPECT_TRUE(r->qkv_bias && r->attention_out_bias && r->mlp_bias);
  EXPECT_FALSE(r->dropout);
}

TEST(HfConfig, FalconSevenBIsMultiQueryWithOneSharedNorm) {
  const auto r = load("falcon-7b");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->kv_heads, 1);
  EXPECT_EQ(r->norms_per_layer, 1);
  EXPECT_EQ(r->ffn_hidden, 4 * 4544);
  EXPECT_EQ(r->effective_head_dim(), 64);
  EXPECT_TRUE(r->tied_embeddings);
  EXPECT_EQ(r->position, PositionKind::rope);
  EXPECT_FALSE(r->qkv_bias || r->attention_out_bias || r->mlp_bias);
  EXPECT_EQ(r->max_seq_len, 2048);  // FalconConfig default, the key is absent
}

TEST(HfConfig, FalconFortyBHasKvGroupsAndTwoNorms) {
  const auto r = load("falcon-40b");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->kv_heads, 8);
  EXPECT_EQ(r->norms_per_layer, 2);
}

TEST(HfConfig, FalconVariants) {
  // Falcon-RW style: sequential blocks, plain multi-head attention, biases, ALiBi.
  auto rw = fixture("falcon-7b");
  rw["parallel_attn"] = false;
  rw["multi_query"] = false;
  rw["bias"] = true;
  rw["alibi"] = true;
  auto r = from(rw);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->norms_per_layer, 2);
  EXPECT_EQ(r->kv_heads, 71);
  EXPECT_EQ(r->position, PositionKind::alibi);
  EXPECT_TRUE(r->qkv_bias && r->attention_out_bias && r->mlp_bias);

  // Falcon2-11B style: new architecture with one norm and an explicit FFN width.
  auto eleven = fixture("falcon-40b");
  eleven["num_ln_in_parallel_attn"] = 1;
  eleven["ffn_hidden_size"] = 16384;
  r = from(eleven);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->norms_per_layer, 1);
  EXPECT_EQ(r->ffn_hidden, 16384);

  // Pre-4.33 spellings n_layer / n_head / n_head_kv.
  auto legacy = fixture("falcon-40b");
  legacy["n_layer"] = legacy["num_hidden_layers"];
  legacy["n_head"] = legacy["num_attention_heads"];
  legacy["n_head_kv"] = legacy["num_kv_heads"];
  legacy.erase("num_hidden_layers");
  legacy.erase("num_attention_heads");
  legacy.erase("num_kv_heads");
  r = from(legacy);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(total_parameters(*r), 41'303'293'952);
}

TEST(HfConfig, FamilyDefaultsFollowTransformers) {
  auto llama = fixture("Llama-2-70b-hf");
  llama.erase("num_key_value_heads");  // LlamaConfig: None -> num_attention_heads
  llama.erase("tie_word_embeddings");  // LlamaConfig default False
  auto r = from(llama);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->kv_heads, 64);
  EXPECT_FALSE(r->tied_embeddings);

  auto mistral = fixture("Mistral-7B-v0.1");
  mistral.erase("num_key_value_heads");  // MistralConfig signature default 8
  r = from(mistral);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->kv_heads, 8);
  mistral["num_key_value_heads"] = nullptr;  // explicit null -> num_attention_heads
  r = from(mistral);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->kv_heads, 32);

  auto gpt2 = fixture("gpt2");
  gpt2.erase("resid_pdrop");  // GPT2Config default 0.1
  gpt2["attn_pdrop"] = 0.0;
  gpt2["embd_pdrop"] = 0.0;
  EXPECT_TRUE(from(gpt2)->dropout);
  gpt2["resid_pdrop"] = 0.0;
  EXPECT_FALSE(from(gpt2)->dropout);
  gpt2["n_inner"] = 1000;
  EXPECT_EQ(from(gpt2)->ffn_hidden, 1000);
}

TEST(HfConfig, LlamaOptionalKeys) {
  auto c = fixture("Llama-3.1-8B");
  c["attention_bias"] = true;
  c["mlp_bias"] = true;
  c["attention_dropout"] = 0.1;
  c["head_dim"] = 160;  // head_dim need not be hidden_size / heads
  c["hidden_size"] = 5000;
  auto r = from(c);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_TRUE(r->qkv_bias && r->attention_out_bias && r->mlp_bias);
  EXPECT_TRUE(r->dropout);
  EXPECT_EQ(r->q_width(), 32 * 160);
  EXPECT_EQ(r->kv_width(), 8 * 160);
}

TEST(HfConfig, ArchitecturesAloneSelectTheFamily) {
  auto c = fixture("Qwen2-7B");
  c.erase("model_type");
  auto r = from(c);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->source, "Hugging Face config.json (architectures Qwen2ForCausalLM)");
  EXPECT_TRUE(r->qkv_bias);
  EXPECT_EQ(total_parameters(*r), 7'615'616'512);
}

}  // namespace
}  // namespace plansight::estimator
