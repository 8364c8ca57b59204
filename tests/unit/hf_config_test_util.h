// Helpers shared by the Hugging Face config.json importer tests: fixture loading from
// tests/data/hf/<model>/config.json and short accessors for the first error of a Result.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plansight/estimator/hf_config.h"

namespace plansight::estimator::hf_test {

// The folders under tests/data/hf, one per published config.
inline constexpr const char* kModels[] = {"Llama-2-70b-hf", "Llama-3.1-8B", "Mistral-7B-v0.1", "Qwen2-7B",
                                          "gpt2",           "pythia-1.4b",  "falcon-7b",       "falcon-40b"};

inline std::string read_text(const std::string& relative) {
  std::ifstream in(std::string(PLANSIGHT_HF_FIXTURE_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open fixture " << relative;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline nlohmann::json fixture(const std::string& model) { return nlohmann::json::parse(read_text(model + "/config.json")); }

inline Result<ModelSpec> load(const std::string& model) {
  return model_from_hf_config(read_text(model + "/config.json"), model);
}

inline Result<ModelSpec> from(const nlohmann::json& config) { return model_from_hf_config(config.dump(), "edited"); }

// The field of the only (first) error; fails the test when the import succeeded.
inline std::string error_field(const Result<ModelSpec>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() || r.errors().empty() ? std::string("<none>") : r.errors().front().field;
}

inline std::string error_message(const Result<ModelSpec>& r) {
  return r.ok() || r.errors().empty() ? std::string() : r.errors().front().message;
}

}  // namespace plansight::estimator::hf_test
