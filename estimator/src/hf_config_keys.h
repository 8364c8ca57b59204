// Helpers the Hugging Face config.json readers share: required and optional sizes, flags,
// dropout probabilities and the cross-key shape checks. Each records a Diagnostic naming the
// config key through JsonReader; none throws.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/model_spec.h"

namespace plansight::estimator::hf {

// Sizes and counts above this are rejected, so that a product of two of them fits in int64.
constexpr std::int64_t kMaxSize = std::int64_t{1} << 30;

// A required size or count: "missing" when absent, JsonReader's message when mistyped.
void read_required(JsonReader& r, std::string_view key, std::int64_t& out);
void read_optional(JsonReader& r, std::string_view key, std::int64_t& out);
// An optional size where JSON null means `if_null` (DeepSeek's q_lora_rank null: no compression).
void read_nullable(JsonReader& r, const nlohmann::json& config, std::string_view key, std::int64_t if_null,
                   std::int64_t& out);
bool read_flag(JsonReader& r, std::string_view key, bool fallback);
// True when any of the dropout probabilities (each defaulting as given) is above zero.
bool any_dropout(JsonReader& r, std::initializer_list<std::pair<std::string_view, double>> keys);
// `key` when present, else `legacy` when that is present (older Falcon configs spell n_layer).
std::string_view pick(const JsonReader& r, std::string_view key, std::string_view legacy);
std::string divisors_of(std::int64_t n);

// Names of the keys that hold the checked sizes, per family (GPT-2 says n_embd/n_head).
struct ShapeKeys {
  std::string_view hidden;
  std::string_view heads;
  std::string_view kv_heads;  // empty: the family has no such key
  bool head_dim_key = false;  // the family accepts an explicit head_dim
};

// Cross-key consistency; sizes already reported as bad (still 0) are skipped.
void check_shape(JsonReader& r, const ModelSpec& m, const ShapeKeys& keys);

}  // namespace plansight::estimator::hf
