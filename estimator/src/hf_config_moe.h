// Readers of the Hugging Face config.json key sets of mixture-of-experts families: Mixtral,
// Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3, gpt-oss and Llama 4 (text model). Each applies the
// defaults of transformers' configuration_<family>.py and the module structure of its
// modeling_<family>.py (cited per reader), so parameter counts are exact.
#pragma once

#include <nlohmann/json.hpp>

#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/model_spec.h"

namespace plansight::estimator::hf {

void read_mixtral(JsonReader& r, ModelSpec& m);
void read_qwen_moe(JsonReader& r, const nlohmann::json& config, bool qwen3, ModelSpec& m);
void read_deepseek(JsonReader& r, const nlohmann::json& config, bool v3, ModelSpec& m);
void read_gpt_oss(JsonReader& r, ModelSpec& m);
// `r` reads the text model's keys: text_config of a Llama4ForConditionalGeneration config, or
// the top level of a llama4_text config.
void read_llama4_text(JsonReader& r, ModelSpec& m);

}  // namespace plansight::estimator::hf
