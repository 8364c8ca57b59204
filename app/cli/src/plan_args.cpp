// Flags -> JSON overlay -> Plan. Each flag maps to one field of the plan file format
// (estimator/json_io.h), so `--tp 4` and {"layout": {"tp": 4}} are the same request.
#include "plansight/cli/plan_args.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "plansight/estimator/hf_config.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/model_sizing.h"
#include "plansight/estimator/presets.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

struct Mapping {
  const char* flag;
  const char* section;
  const char* key;
  enum Kind { integer, number, text, toggle, toggle_off } kind;
};

// Model dimension flags override the chosen model; the rest set one field each.
constexpr Mapping kMappings[] = {
    {"--layers", "model", "layers", Mapping::integer},
    {"--hidden", "model", "hidden", Mapping::integer},
    {"--heads", "model", "heads", Mapping::integer},
    {"--kv-heads", "model", "kv_heads", Mapping::integer},
    {"--ffn-hidden", "model", "ffn_hidden", Mapping::integer},
    {"--vocab", "model", "vocab", Mapping::integer},
    {"--experts", "model.moe", "experts", Mapping::integer},
    {"--top-k", "model.moe", "top_k", Mapping::integer},
    {"--expert-ffn-hidden", "model.moe", "expert_ffn_hidden", Mapping::integer},
    {"--shared-experts", "model.moe", "shared_experts", Mapping::integer},
    {"--shared-expert-ffn-hidden", "model.moe", "shared_expert_ffn_hidden", Mapping::integer},
    {"--first-dense-layers", "model.moe", "first_dense_layers", Mapping::integer},
    {"--moe-layer-interval", "model.moe", "layer_interval", Mapping::integer},
    {"--capacity-factor", "model.moe", "capacity_factor", Mapping::number},
    {"--load-imbalance", "model.moe", "load_imbalance", Mapping::number},
    {"--q-lora-rank", "model.mla", "q_lora_rank", Mapping::integer},
    {"--kv-lora-rank", "model.mla", "kv_lora_rank", Mapping::integer},
    {"--qk-nope-head-dim", "model.mla", "qk_nope_head_dim", Mapping::integer},
    {"--qk-rope-head-dim", "model.mla", "qk_rope_head_dim", Mapping::integer},
    {"--v-head-dim", "model.mla", "v_head_dim", Mapping::integer},
    {"--mtp-modules", "model", "mtp_modules", Mapping::integer},
    {"--gpus", "cluster", "gpus", Mapping::integer},
    {"--gpus-per-node", "cluster", "gpus_per_node", Mapping::integer},
    {"--price-per-gpu-hour", "cluster", "price_per_gpu_hour", Mapping::number},
    {"--currency", "cluster", "currency", Mapping::text},
    {"--host-link-gb-per-s", "cluster", "host_link_gb_per_s", Mapping::number},
    {"--host-memory-gib", "cluster", "host_memory_gib", Mapping::number},
    {"--host-memory-gb-per-s", "cluster", "host_memory_gb_per_s", Mapping::number},
    {"--tp", "layout", "tp", Mapping::integer},
    {"--pp", "layout", "pp", Mapping::integer},
    {"--vpp", "layout", "vpp", Mapping::integer},
    {"--dp", "layout", "dp", Mapping::integer},
    {"--cp", "layout", "cp", Mapping::integer},
    {"--ep", "layout", "ep", Mapping::integer},
    {"--etp", "layout", "etp", Mapping::integer},
    {"--zero", "layout", "zero_stage", Mapping::integer},
    {"--sequence-parallel", "layout", "sequence_parallel", Mapping::toggle},
    {"--recompute", "layout", "recompute", Mapping::text},
    {"--schedule", "layout", "schedule", Mapping::text},
    {"--no-dp-overlap", "layout", "dp_overlap", Mapping::toggle_off},
    {"--placement", "layout", "placement", Mapping::text},
    {"--offload-optimizer", "layout", "offload_optimizer", Mapping::toggle},
    {"--offload-params", "layout", "offload_params", Mapping::toggle},
    {"--offload-activations", "layout", "offload_activations", Mapping::toggle},
    {"--micro-batch", "training", "micro_batch", Mapping::integer},
    {"--global-batch", "training", "global_batch", Mapping::integer},
    {"--seq-len", "training", "seq_len", Mapping::integer},
    {"--tokens", "training", "tokens", Mapping::number},
    {"--precision", "training", "precision", Mapping::text},
    {"--grad-precision", "training", "grad_precision", Mapping::text},
    {"--master-precision", "training", "master_precision", Mapping::text},
    {"--optimizer", "training", "optimizer", Mapping::text},
    {"--attention", "training", "attention", Mapping::text},
    {"--causal-flops", "training", "causal_attention_flops", Mapping::toggle},
    {"--achieved-tflops", "training", "achieved_tflops", Mapping::number},
    {"--mfu", "training", "mfu", Mapping::number},
    {"--reserve-gib", "training", "reserve_gib", Mapping::number},
    {"--fragmentation", "training", "fragmentation", Mapping::number},
    {"--vocab-divisible-by", "training", "vocab_divisible_by", Mapping::integer},
};

bool looks_like_file(const std::string& text) {
  return text.find('/') != std::string::npos || (text.size() > 5 && text.substr(text.size() - 5) == ".json");
}

// The plan file's "model" with the model flags (--layers, --hidden, ...) on top. A preset (by
// name or {"preset": ...}) takes them as overrides, which plan_from_json derives from; a whole
// model (a --model config.json, a plan file's full model object) is resolved here with the same
// rule (estimator/model_derivation.h), because its own fields, ffn_hidden among them, would
// otherwise all count as explicitly given.
Result<nlohmann::json> model_with_flags(const nlohmann::json& model, const nlohmann::json& flags) {
  if (model.is_null()) {
    nlohmann::json preset = {{"preset", est::default_plan().model.name}};
    preset.merge_patch(flags);  // deep: --top-k keeps the other "moe" fields
    return preset;
  }
  if (model.is_string() || (model.is_object() && model.contains("preset"))) {
    nlohmann::json preset = model.is_string() ? nlohmann::json{{"preset", model}} : model;
    preset.merge_patch(flags);
    return preset;
  }
  if (!model.is_object()) return model;  // plan_from_json names the bad type
  std::vector<Diagnostic> errors;
  est::ModelSpec spec;
  spec.name = "custom";
  est::JsonReader whole(model, "model", errors);
  est::read_model(whole, spec);
  est::JsonReader overrides(flags, "model", errors);
  est::read_model(overrides, spec);
  if (!errors.empty()) return errors;
  return est::to_json(spec);
}

}  // namespace

const std::vector<FlagSpec>& plan_flags() {
  static const std::vector<FlagSpec> flags = [] {
    std::vector<FlagSpec> f = {{"--plan", true, "FILE.json"}, {"--model", true, "NAME|config.json"}, {"--params", true, "N"},
                               {"--gpu", true, "NAME"}, {"--system", true, "NAME"}};
    for (const auto& m : kMappings) {
      const bool toggle = m.kind == Mapping::toggle || m.kind == Mapping::toggle_off;
      f.push_back({m.flag, !toggle, m.kind == Mapping::text ? "NAME" : "N"});
    }
    return f;
  }();
  return flags;
}

std::vector<FlagSpec> plan_command_flags(std::vector<FlagSpec> extra) {
  std::vector<FlagSpec> flags = plan_flags();
  flags.push_back({"--json", false, ""});
  flags.insert(flags.end(), extra.begin(), extra.end());
  return flags;
}

bool has_plan_flags(const Args& args) {
  for (const auto& f : plan_flags()) {
    if (args.has(f.name)) return true;
  }
  return false;
}

Result<std::string> read_text_file(const std::string& path, const std::string& field) {
  // An ifstream opens a directory and reads nothing, which would surface as "not valid JSON at
  // byte 0".
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return make_error(field, "\"" + path + "\" is a directory; give a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(field, "cannot read \"" + path + "\": no such readable file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<nlohmann::json> plan_overlay(const Args& args, std::vector<Diagnostic>* adjustments) {
  std::vector<Diagnostic> errors;
  nlohmann::json overlay = nlohmann::json::object();
  nlohmann::json model_flags = nlohmann::json::object();
  if (auto path = args.value("--plan")) {
    auto text = read_text_file(*path, "--plan");
    if (!text) return text.errors();
    auto json = est::parse_json_text(*text, "--plan " + *path);
    if (!json) return json.errors();
    if (!json->is_object()) return make_error("--plan", "\"" + *path + "\" is not a JSON object");
    overlay = std::move(*json);
  }

  if (auto model = args.value("--model")) {
    std::error_code ec;
    std::optional<std::filesystem::path> config;
    if (std::filesystem::is_directory(*model, ec)) {
      // A Hugging Face model folder (as downloaded or written by save_pretrained): its config.json.
      config = std::filesystem::path(*model) / "config.json";
      if (!std::filesystem::is_regular_file(*config, ec)) {
        return make_error("--model", "\"" + *model + "\" is a directory without a config.json; valid: a preset name, a "
                                     "config.json or a Hugging Face model folder");
      }
    } else if (looks_like_file(*model) || std::filesystem::is_regular_file(*model, ec)) {
      config = *model;
    }
    if (config) {
      auto text = read_text_file(config->string(), "--model");
      if (!text) return text.errors();
      // The model takes its folder's name ("Llama-3.1-8B"), as the app's import does.
      const auto folder = std::filesystem::absolute(*config, ec).lexically_normal().parent_path().filename();
      auto spec = est::model_from_hf_config(*text, folder.string());
      if (!spec) return spec.errors();
      overlay["model"] = est::to_json(*spec);
    } else {
      overlay["model"] = {{"preset", *model}};
    }
  }
  if (args.has("--params")) {
    // A GPT-shaped model of that many parameters (estimator/model_sizing.h), as a whole model:
    // the model flags (--seq-len's model, --vocab, ...) still apply on top.
    if (args.has("--model")) {
      return make_error("--params", "give --params or --model, not both: --params builds a GPT-shaped model of that size");
    }
    auto n = args.number("--params");
    if (!n) return n.errors();
    auto spec = est::gpt_model_with_parameters(*n);
    if (!spec) return spec.errors();
    overlay["model"] = est::to_json(*spec);
  }
  if (auto gpu = args.value("--gpu")) overlay["cluster"]["gpu"] = *gpu;
  if (auto system = args.value("--system")) overlay["cluster"]["system"] = *system;

  for (const auto& m : kMappings) {
    if (!args.has(m.flag)) continue;
    nlohmann::json value;
    switch (m.kind) {
      case Mapping::integer: {
        auto v = args.integer(m.flag);
        if (!v) { errors.insert(errors.end(), v.errors().begin(), v.errors().end()); continue; }
        value = *v;
        break;
      }
      case Mapping::number: {
        auto v = args.number(m.flag);
        if (!v) { errors.insert(errors.end(), v.errors().begin(), v.errors().end()); continue; }
        value = *v;
        break;
      }
      case Mapping::text: value = *args.value(m.flag); break;
      case Mapping::toggle: value = true; break;
      case Mapping::toggle_off: value = false; break;
    }
    const std::string section = m.section;
    if (section == "model") {
      model_flags[m.key] = value;
    } else if (section.rfind("model.", 0) == 0) {
      model_flags[section.substr(6)][m.key] = value;  // "model.moe" -> {"moe": {key: value}}
    } else {
      overlay[section][m.key] = value;
    }
  }
  if (!model_flags.empty()) {
    auto model = model_with_flags(overlay.contains("model") ? overlay["model"] : nlohmann::json(), model_flags);
    if (!model) return model.errors();
    overlay["model"] = std::move(*model);
  }
  if (!errors.empty()) return errors;
  return overlay;
}

Result<est::Plan> plan_from_args(const Args& args, std::vector<Diagnostic>* adjustments) {
  auto overlay = plan_overlay(args, adjustments);
  if (!overlay) return overlay.errors();
  return est::plan_from_json(*overlay, adjustments);
}

void print_adjustments(const std::vector<Diagnostic>& adjustments, std::ostream& err) {
  for (const auto& a : adjustments) err << "note: " << a.field << ": " << a.message << "\n";
}

}  // namespace plansight::cli
