// Import a ModelSpec from a Hugging Face transformers config.json (Llama, Mistral, Qwen2, GPT-2,
// GPT-NeoX, Falcon here; the MoE families in hf_config_moe.cpp). One reader per family applies that family's defaults from transformers'
// configuration_<family>.py, so an absent optional key means what it means to transformers; the
// structural sizes are required, because a silent default (LlamaConfig's hidden_size 4096) would
// describe a different model. Every access goes through JsonReader, which records, never throws.
#include "plansight/estimator/hf_config.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hf_config_keys.h"
#include "hf_config_moe.h"
#include "plansight/estimator/json_reader.h"

namespace plansight::estimator {
namespace {

using namespace hf;

enum class Family {
  llama, mistral, qwen2, gpt2, gpt_neox, falcon,
  mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, gpt_oss, llama4, llama4_text
};

struct FamilyName {
  Family family;
  std::string_view model_type;
  std::array<std::string_view, 2> architectures;  // class names in config.json's "architectures"
};

constexpr std::array<FamilyName, 14> kFamilies = {{
    {Family::llama, "llama", {"LlamaForCausalLM", "LlamaModel"}},
    {Family::mistral, "mistral", {"MistralForCausalLM", "MistralModel"}},
    {Family::qwen2, "qwen2", {"Qwen2ForCausalLM", "Qwen2Model"}},
    {Family::gpt2, "gpt2", {"GPT2LMHeadModel", "GPT2Model"}},
    {Family::gpt_neox, "gpt_neox", {"GPTNeoXForCausalLM", "GPTNeoXModel"}},
    {Family::falcon, "falcon", {"FalconForCausalLM", "FalconModel"}},
    {Family::mixtral, "mixtral", {"MixtralForCausalLM", "MixtralModel"}},
    {Family::qwen2_moe, "qwen2_moe", {"Qwen2MoeForCausalLM", "Qwen2MoeModel"}},
    {Family::qwen3_moe, "qwen3_moe", {"Qwen3MoeForCausalLM", "Qwen3MoeModel"}},
    {Family::deepseek_v2, "deepseek_v2", {"DeepseekV2ForCausalLM", "DeepseekV2Model"}},
    {Family::deepseek_v3, "deepseek_v3", {"DeepseekV3ForCausalLM", "DeepseekV3Model"}},
    {Family::gpt_oss, "gpt_oss", {"GptOssForCausalLM", "GptOssModel"}},
    {Family::llama4, "llama4", {"Llama4ForConditionalGeneration", "Llama4ForConditionalGeneration"}},
    {Family::llama4_text, "llama4_text", {"Llama4TextModel", "Llama4ForCausalLM"}},
}};

std::string supported_model_types() {
  std::string out;
  for (const auto& f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(f.model_type);
  return out;
}

std::string supported_architectures() {
  std::string out;
  for (const auto& f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(f.architectures[0]);
  return out;
}

// The family from "model_type", or from "architectures" when model_type is absent (some exported
// configs carry only the class name). `source` gets the text for ModelSpec::source.
std::optional<Family> detect_family(JsonReader& r, std::string& source) {
  if (const auto* v = r.get("model_type")) {
    if (!v->is_string()) {
      r.error("model_type", "expected a string, got " + describe_json(*v) + "; valid: " + supported_model_types());
      return std::nullopt;
    }
    const std::string type = v->get<std::string>();
    for (const auto& f : kFamilies) {
      if (type == f.model_type) {
        source = "Hugging Face config.json (model_type " + type + ")";
        return f.family;
      }
    }
    r.error("model_type", "unsupported value " + describe_json(*v) + "; valid: " + supported_model_types());
    return std::nullopt;
  }
  const auto* archs = r.get("architectures");
  if (!archs) {
    r.error("model_type", "missing (and no \"architectures\"); expected one of " + supported_model_types());
    return std::nullopt;
  }
  if (!archs->is_array()) {
    r.error("architectures", "expected an array of class names, got " + describe_json(*archs));
    return std::nullopt;
  }
  for (const auto& a : *archs) {
    if (!a.is_string()) continue;
    const std::string arch = a.get<std::string>();
    for (const auto& f : kFamilies) {
      if (arch == f.architectures[0] || arch == f.architectures[1]) {
        source = "Hugging Face config.json (architectures " + arch + ")";
        return f.family;
      }
    }
  }
  r.error("architectures", "no supported class in " + describe_json(*archs) + " and no model_type; valid: " +
                               supported_architectures() + " (or model_type " + supported_model_types() + ")");
  return std::nullopt;
}

// Llama, Mistral, Qwen2: RMSNorm, RoPE, SwiGLU (gate/up/down), GQA.
void read_llama_style(JsonReader& r, const nlohmann::json& config, Family family, ModelSpec& m) {
  read_required(r, "hidden_size", m.hidden);
  read_required(r, "intermediate_size", m.ffn_hidden);
  read_required(r, "num_hidden_layers", m.layers);
  read_required(r, "num_attention_heads", m.heads);
  read_required(r, "vocab_size", m.vocab);
  // An absent num_key_value_heads takes the signature default: LlamaConfig None (-> heads),
  // MistralConfig 8, Qwen2Config 32; an explicit null means heads in all three.
  const bool kv_null = config.contains("num_key_value_heads") && config["num_key_value_heads"].is_null();
  m.kv_heads = kv_null || family == Family::llama ? m.heads : (family == Family::mistral ? 8 : 32);
  read_optional(r, "num_key_value_heads", m.kv_heads);
  read_optional(r, "head_dim", m.head_dim);  // Llama/Mistral: None -> hidden_size // heads
  // max_position_embeddings defaults: LlamaConfig 2048, MistralConfig 4096 * 32, Qwen2Config 32768.
  m.max_seq_len = family == Family::llama ? 2048 : (family == Family::mistral ? 131072 : 32768);
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", false);  // all three default to False

  m.gated_mlp = true;
  m.norm = NormKind::rms_norm;
  m.norm_bias = false;
  m.norms_per_layer = 2;  // input_layernorm, post_attention_layernorm
  m.position = PositionKind::rope;
  if (family == Family::llama) {
    m.qkv_bias = m.attention_out_bias = read_flag(r, "attention_bias", false);  // q, k, v and o_proj
    m.mlp_bias = read_flag(r, "mlp_bias", false);
  } else {
    // Mistral: no bias anywhere; Qwen2: bias on q/k/v_proj only (modeling_qwen2.Qwen2Attention).
    m.qkv_bias = family == Family::qwen2;
    m.attention_out_bias = false;
    m.mlp_bias = false;
  }
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}});
  check_shape(r, m, {"hidden_size", "num_attention_heads", "num_key_value_heads", true});
}

// GPT-2: LayerNorm with bias, GELU MLP of n_inner (None -> 4 * n_embd), learned positions.
void read_gpt2(JsonReader& r, ModelSpec& m) {
  read_required(r, "n_embd", m.hidden);
  read_required(r, "n_layer", m.layers);
  read_required(r, "n_head", m.heads);
  read_required(r, "vocab_size", m.vocab);
  m.ffn_hidden = 4 * m.hidden;  // GPT2Block: inner_dim = n_inner if not None else 4 * hidden_size
  read_optional(r, "n_inner", m.ffn_hidden);
  m.max_seq_len = 1024;  // GPT2Config n_positions default
  read_optional(r, "n_positions", m.max_seq_len);
  m.kv_heads = m.heads;
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", true);  // PretrainedConfig default
  m.gated_mlp = false;
  m.norm = NormKind::layer_norm;
  m.norm_bias = true;
  m.norms_per_layer = 2;  // ln_1, ln_2
  m.position = PositionKind::learned;
  m.qkv_bias = m.attention_out_bias = m.mlp_bias = true;  // Conv1D layers all carry a bias
  // GPT2Config: resid_pdrop, embd_pdrop, attn_pdrop all default to 0.1.
  m.dropout = any_dropout(r, {{"resid_pdrop", 0.1}, {"attn_pdrop", 0.1}, {"embd_pdrop", 0.1}});
  check_shape(r, m, {"n_embd", "n_head", "", false});
}

// GPT-NeoX / Pythia: LayerNorm with bias, partial rotary, biased GELU MLP, untied embed_out.
void read_gpt_neox(JsonReader& r, ModelSpec& m) {
  read_required(r, "hidden_size", m.hidden);
  read_required(r, "intermediate_size", m.ffn_hidden);
  read_required(r, "num_hidden_layers", m.layers);
  read_required(r, "num_attention_heads", m.heads);
  read_required(r, "vocab_size", m.vocab);
  m.kv_heads = m.heads;
  m.max_seq_len = 2048;  // GPTNeoXConfig default
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", false);  // GPTNeoXConfig default
  // use_parallel_residual changes the dataflow, not the weights: GPTNeoXLayer keeps both
  // input_layernorm and post_attention_layernorm either way.
  (void)read_flag(r, "use_parallel_residual", true);
  m.gated_mlp = false;
  m.norm = NormKind::layer_norm;
  m.norm_bias = true;
  m.norms_per_layer = 2;
  m.position = PositionKind::rope;
  m.qkv_bias = m.attention_out_bias = read_flag(r, "attention_bias", true);  // query_key_value, dense
  m.mlp_bias = true;  // dense_h_to_4h / dense_4h_to_h are plain nn.Linear
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}, {"hidden_dropout", 0.0}});
  check_shape(r, m, {"hidden_size", "num_attention_heads", "", false});
}

// Falcon: fused query_key_value, LayerNorm with bias, GELU MLP of 4 * hidden, tied embeddings.
void read_falcon(JsonReader& r, ModelSpec& m) {
  read_required(r, "hidden_size", m.hidden);
  const std::string_view layers_key = pick(r, "num_hidden_layers", "n_layer");
  const std::string_view heads_key = pick(r, "num_attention_heads", "n_head");
  const std::string_view kv_key = pick(r, "num_kv_heads", "n_head_kv");  // n_head_kv: pre-4.33 spelling
  read_required(r, layers_key, m.layers);
  read_required(r, heads_key, m.heads);
  read_required(r, "vocab_size", m.vocab);

  // FalconConfig defaults: new_decoder_architecture False, multi_query True, parallel_attn True,
  // bias False, alibi False, max_position_embeddings 2048.
  const bool new_arch = read_flag(r, "new_decoder_architecture", false);
  const bool multi_query = read_flag(r, "multi_query", true);
  const bool parallel_attn = read_flag(r, "parallel_attn", true);
  const bool bias = read_flag(r, "bias", false);
  const bool alibi = read_flag(r, "alibi", false);
  // FalconAttention: num_kv_heads from config for the new architecture; 1 for multi-query;
  // otherwise a plain 3 * hidden fused projection (all heads).
  std::int64_t kv_heads = m.heads;
  read_optional(r, kv_key, kv_heads);
  m.kv_heads = new_arch ? kv_heads : (multi_query ? 1 : m.heads);
  // FalconDecoderLayer: sequential blocks have input + post-attention norms; parallel blocks have
  // num_ln_in_parallel_attn norms (None -> 2 for the new architecture: ln_attn and ln_mlp, else 1).
  std::int64_t parallel_norms = new_arch ? 2 : 1;
  r.read("num_ln_in_parallel_attn", parallel_norms, 1, 2);
  m.norms_per_layer = parallel_attn ? parallel_norms : 2;
  m.ffn_hidden = 4 * m.hidden;  // FalconMLP: ffn_hidden_size None -> 4 * hidden_size
  read_optional(r, "ffn_hidden_size", m.ffn_hidden);
  m.max_seq_len = 2048;
  read_optional(r, "max_position_embeddings", m.max_seq_len);
  m.tied_embeddings = read_flag(r, "tie_word_embeddings", true);  // PretrainedConfig default
  m.gated_mlp = false;
  m.norm = NormKind::layer_norm;
  m.norm_bias = true;
  m.position = alibi ? PositionKind::alibi : PositionKind::rope;
  m.qkv_bias = m.attention_out_bias = m.mlp_bias = bias;  // every FalconLinear uses config.bias
  m.dropout = any_dropout(r, {{"attention_dropout", 0.0}, {"hidden_dropout", 0.0}});
  check_shape(r, m, {"hidden_size", heads_key, new_arch ? kv_key : std::string_view{}, false});
}

}  // namespace

Result<ModelSpec> model_from_hf_config(std::string_view json_text, std::string_view name) {
  std::optional<Result<nlohmann::json>> parsed;
  try {
    parsed.emplace(parse_json_text(json_text, "config.json"));
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range.406 for a number like 1e400
    return make_error("config.json", std::string("not a usable JSON document: ") + e.what());
  }
  if (!parsed->ok()) return parsed->errors();
  const nlohmann::json& config = parsed->value();
  if (!config.is_object()) {
    return make_error("config.json", "expected a JSON object at the top level, got " + describe_json(config));
  }

  std::vector<Diagnostic> errors;
  JsonReader r(config, "", errors);
  ModelSpec m;
  m.name = std::string(name);
  const auto family = detect_family(r, m.source);
  if (!family) return errors;
  switch (*family) {
    case Family::llama:
    case Family::mistral:
    case Family::qwen2: read_llama_style(r, config, *family, m); break;
    case Family::gpt2: read_gpt2(r, m); break;
    case Family::gpt_neox: read_gpt_neox(r, m); break;
    case Family::falcon: read_falcon(r, m); break;
    case Family::mixtral: read_mixtral(r, m); break;
    case Family::qwen2_moe:
    case Family::qwen3_moe: read_qwen_moe(r, config, *family == Family::qwen3_moe, m); break;
    case Family::deepseek_v2:
    case Family::deepseek_v3: read_deepseek(r, config, *family == Family::deepseek_v3, m); break;
    case Family::gpt_oss: read_gpt_oss(r, m); break;
    case Family::llama4_text: read_llama4_text(r, m); break;
    case Family::llama4:
      // Llama4ForConditionalGeneration: the language model's keys are under text_config (the
      // vision encoder is not costed).
      if (auto text = r.child("text_config")) {
        read_llama4_text(*text, m);
      } else if (!r.has("text_config")) {
        r.error("text_config", "missing; a llama4 config keeps the language model's sizes in text_config");
      }
      break;
  }
  if (has_errors(errors)) return errors;
  return m;
}

}  // namespace plansight::estimator
