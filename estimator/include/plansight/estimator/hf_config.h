// Import a ModelSpec from a Hugging Face transformers config.json (Llama, Mistral, Qwen2,
// GPT-2, GPT-NeoX, Falcon key sets; Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3, gpt-oss and
// Llama 4 for mixtures of experts).
#pragma once

#include <string_view>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/model_spec.h"

namespace plansight::estimator {

// `name` becomes ModelSpec::name (e.g. the file's folder). Errors name the config key.
Result<ModelSpec> model_from_hf_config(std::string_view json_text, std::string_view name);

}  // namespace plansight::estimator
