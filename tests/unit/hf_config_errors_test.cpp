// Error paths of the Hugging Face config.json importer: malformed or truncated JSON, wrong types,
// missing keys, unsupported families and inconsistent sizes each give an error whose field names
// the config key and whose message names the value and what would be valid; nothing throws.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hf_config_test_util.h"
#include "plansight/estimator/hf_config.h"

namespace plansight::estimator {
namespace {

using namespace hf_test;

TEST(HfConfigErrors, MalformedJsonNamesTheDocument) {
  const auto truncated = model_from_hf_config(read_text("malformed/truncated.json"), "truncated");
  EXPECT_EQ(error_field(truncated), "config.json");
  EXPECT_NE(error_message(truncated).find("byte"), std::string::npos) << error_message(truncated);
  EXPECT_EQ(error_field(model_from_hf_config("", "empty")), "config.json");
  EXPECT_EQ(error_field(model_from_hf_config("{\"model_type\": \"llama\",}", "comma")), "config.json");
  EXPECT_EQ(error_field(model_from_hf_config("[1, 2]", "array")), "config.json");
  // nlohmann reports an overflowing number as out_of_range, not parse_error: still no throw.
  EXPECT_EQ(error_field(model_from_hf_config("{\"hidden_size\": 1e400}", "overflow")), "config.json");
}

// `import-model --json` writes the messages into a JSON document, which must be UTF-8: a stray
// byte echoed from the parser (found by fuzz_hf_config), or a long value cut inside a character,
// made the CLI fail with nlohmann's type_error.316 instead of reporting the error.
TEST(HfConfigErrors, MessagesStayUtf8ForBadBytesAndLongValues) {
  const std::string stray_byte = "\x90";
  std::string long_type = "{\"model_type\": \"a";
  for (int i = 0; i < 30; ++i) long_type += "\xc3\xa9";  // U+00E9, two bytes, misaligned by the "a"
  long_type += "\"}";
  for (const std::string& text : {stray_byte, long_type}) {
    const auto r = model_from_hf_config(text, "utf8");
    ASSERT_FALSE(r.ok());
    const std::string message = error_message(r);
    EXPECT_NO_THROW((void)nlohmann::json(message).dump()) << message;
  }
  EXPECT_NE(error_message(model_from_hf_config(stray_byte, "byte")).find("\\x90"), std::string::npos)
      << error_message(model_from_hf_config(stray_byte, "byte"));
  EXPECT_NE(error_message(model_from_hf_config(long_type, "long")).find("\"a\xc3\xa9\xc3\xa9"), std::string::npos);
}

TEST(HfConfigErrors, EveryTruncationOfEveryFixtureIsAnErrorNotACrash) {
  for (const char* model : kModels) {
    const std::string text = read_text(std::string(model) + "/config.json");
    const std::size_t end = text.find_last_of('}');
    for (std::size_t n = 0; n < end; ++n) {
      const auto r = model_from_hf_config(std::string_view(text).substr(0, n), model);
      ASSERT_FALSE(r.ok()) << model << " cut at " << n;
      EXPECT_EQ(r.errors().front().field, "config.json");
    }
  }
}

TEST(HfConfigErrors, WrongTypeNamesTheKeyAndTheValue) {
  const auto r = model_from_hf_config(read_text("malformed/hidden_size_string.json"), "string");
  EXPECT_EQ(error_field(r), "hidden_size");
  EXPECT_NE(error_message(r).find("\"8192\""), std::string::npos) << error_message(r);
  EXPECT_NE(error_message(r).find("whole number"), std::string::npos) << error_message(r);

  // Every number or flag in every fixture turned into a string: an error naming the key when the
  // importer reads it, ignored (as transformers' unrelated keys are) when it does not.
  const std::vector<std::string> read_keys = {
      "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
      "vocab_size", "max_position_embeddings", "tie_word_embeddings", "attention_bias", "mlp_bias",
      "attention_dropout", "hidden_dropout", "n_embd", "n_layer", "n_head", "n_positions", "resid_pdrop",
      "attn_pdrop", "embd_pdrop", "use_parallel_residual", "alibi", "bias", "multi_query",
      "new_decoder_architecture", "parallel_attn", "num_kv_heads"};
  int checked = 0;
  for (const char* model : kModels) {
    const auto original = fixture(model);
    for (const auto& [key, value] : original.items()) {
      if (!value.is_number() && !value.is_boolean()) continue;
      auto edited = original;
      edited[key] = value.dump();
      const auto result = from(edited);
      if (std::find(read_keys.begin(), read_keys.end(), key) == read_keys.end()) {
        EXPECT_TRUE(result.ok()) << model << " " << key << ": " << result.error_text();
        continue;
      }
      EXPECT_EQ(error_field(result), key) << model;
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}

TEST(HfConfigErrors, MissingRequiredKeyIsNamed) {
  const auto r = model_from_hf_config(read_text("malformed/missing_layers.json"), "missing");
  EXPECT_EQ(error_field(r), "num_hidden_layers");
  EXPECT_NE(error_message(r).find("missing"), std::string::npos) << error_message(r);

  const std::vector<std::pair<const char*, std::vector<const char*>>> required = {
      {"Llama-2-70b-hf", {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}},
      {"Mistral-7B-v0.1", {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}},
      {"Qwen2-7B", {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}},
      {"gpt2", {"n_embd", "n_layer", "n_head", "vocab_size"}},
      {"pythia-1.4b", {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}},
      {"falcon-7b", {"hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}},
  };
  for (const auto& [model, keys] : required) {
    for (const char* key : keys) {
      auto edited = fixture(model);
      edited.erase(key);
      const auto result = from(edited);
      ASSERT_EQ(result.errors().size(), 1u) << model << " without " << key << ": " << result.error_text();
      EXPECT_EQ(error_field(result), key) << model;
      EXPECT_NE(error_message(result).find("missing"), std::string::npos) << error_message(result);
    }
  }
}

TEST(HfConfigErrors, UnknownModelTypeListsTheSupportedOnes) {
  const auto r = model_from_hf_config(read_text("malformed/unknown_model_type.json"), "jamba");
  EXPECT_EQ(error_field(r), "model_type");
  EXPECT_NE(error_message(r).find("\"jamba\""), std::string::npos) << error_message(r);
  EXPECT_NE(error_message(r).find("llama, mistral, qwen2, gpt2, gpt_neox, falcon, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, gpt_oss, llama4, llama4_text"), std::string::npos)
      << error_message(r);

  auto c = fixture("Mistral-7B-v0.1");
  c["model_type"] = 7;
  EXPECT_EQ(error_field(from(c)), "model_type");
  c.erase("model_type");
  c["architectures"] = {"JambaForCausalLM"};
  EXPECT_EQ(error_field(from(c)), "architectures");
  c["architectures"] = "MistralForCausalLM";  // a string, not an array
  EXPECT_EQ(error_field(from(c)), "architectures");
  c.erase("architectures");
  EXPECT_EQ(error_field(from(c)), "model_type");
}

TEST(HfConfigErrors, InconsistentSizesNameTheKeyAndTheValidValues) {
  auto c = fixture("Llama-3.1-8B");
  c["hidden_size"] = 4100;  // 4100 / 32 heads is not whole and there is no head_dim
  auto r = from(c);
  EXPECT_EQ(error_field(r), "num_attention_heads");
  EXPECT_NE(error_message(r).find("4100"), std::string::npos) << error_message(r);
  EXPECT_NE(error_message(r).find("head_dim"), std::string::npos) << error_message(r);

  c = fixture("Llama-3.1-8B");
  c["num_key_value_heads"] = 6;
  r = from(c);
  EXPECT_EQ(error_field(r), "num_key_value_heads");
  EXPECT_NE(error_message(r).find("1, 2, 4, 8, 16, 32"), std::string::npos) << error_message(r);

  c = fixture("Qwen2-7B");
  c.erase("num_key_value_heads");  // Qwen2Config's default 32 does not divide 28 heads
  r = from(c);
  EXPECT_EQ(error_field(r), "num_key_value_heads");
  EXPECT_NE(error_message(r).find("default"), std::string::npos) << error_message(r);

  c = fixture("gpt2");
  c["n_embd"] = 770;
  EXPECT_EQ(error_field(from(c)), "n_head");

  c = fixture("falcon-40b");
  c["num_kv_heads"] = 3;
  EXPECT_EQ(error_field(from(c)), "num_kv_heads");
  c["n_head_kv"] = 3;
  c.erase("num_kv_heads");
  EXPECT_EQ(error_field(from(c)), "n_head_kv");
}

TEST(HfConfigErrors, OutOfRangeValuesAreNamed) {
  const std::vector<std::pair<const char*, nlohmann::json>> bad = {
      {"num_hidden_layers", 0}, {"num_attention_heads", -8}, {"hidden_size", 4096.5},
      {"vocab_size", 1e12},     {"attention_dropout", 1.5},  {"head_dim", 0},
  };
  for (const auto& [key, value] : bad) {
    auto c = fixture("Llama-3.1-8B");
    c[key] = value;
    const auto r = from(c);
    EXPECT_EQ(error_field(r), key) << value.dump();
    const std::string message = error_message(r);
    EXPECT_TRUE(message.find("valid") != std::string::npos || message.find("whole number") != std::string::npos)
        << message;
  }
  auto f = fixture("falcon-40b");
  f["num_ln_in_parallel_attn"] = 3;
  EXPECT_EQ(error_field(from(f)), "num_ln_in_parallel_attn");
}

TEST(HfConfigErrors, AllProblemsAreReportedAtOnce) {
  auto c = fixture("Llama-2-70b-hf");
  c.erase("hidden_size");
  c["vocab_size"] = "32000";
  c["tie_word_embeddings"] = "false";
  const auto r = from(c);
  ASSERT_EQ(r.errors().size(), 3u) << r.error_text();
  std::vector<std::string> fields;
  for (const auto& d : r.errors()) fields.push_back(d.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"hidden_size", "vocab_size", "tie_word_embeddings"}));
}

}  // namespace
}  // namespace plansight::estimator
