// Flags -> JSON overlay -> Plan. Each flag is one field of the plan file format, as the
// estimator's field table says (estimator/plan_fields.h), so `--tp 4` and {"layout": {"tp": 4}}
// are the same request.
#include "plansight/cli/plan_args.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "plansight/estimator/hf_config.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/model_sizing.h"
#include "plansight/estimator/plan_fields.h"
#include "plansight/estimator/presets.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

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
    for (const auto& field : est::plan_fields()) {
      const bool toggle = field.kind == est::FieldKind::toggle || field.kind == est::FieldKind::toggle_off;
      f.push_back({std::string(field.flag), !toggle, field.value_hint()});
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

Result<nlohmann::json> plan_overlay(const Args& args) {
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

  for (const auto& field : est::plan_fields()) {
    const std::string flag(field.flag);
    if (!args.has(flag)) continue;
    nlohmann::json value;
    switch (field.kind) {
      case est::FieldKind::integer: {
        auto v = args.integer(flag);
        if (!v) { errors.insert(errors.end(), v.errors().begin(), v.errors().end()); continue; }
        value = *v;
        break;
      }
      case est::FieldKind::number: {
        auto v = args.number(flag);
        if (!v) { errors.insert(errors.end(), v.errors().begin(), v.errors().end()); continue; }
        value = *v;
        break;
      }
      case est::FieldKind::choice:
      case est::FieldKind::text: value = *args.value(flag); break;
      case est::FieldKind::toggle: value = true; break;
      case est::FieldKind::toggle_off: value = false; break;
    }
    if (field.section() == "model") {
      // Model fields go on top of the chosen model ("model.moe.top_k" -> {"moe": {"top_k": ..}}).
      est::PlanField below = field;
      below.path = field.path.substr(6);
      est::set_field_value(model_flags, below, std::move(value));
    } else {
      est::set_field_value(overlay, field, std::move(value));
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
  auto overlay = plan_overlay(args);
  if (!overlay) return overlay.errors();
  return est::plan_from_json(*overlay, adjustments);
}

void print_adjustments(const std::vector<Diagnostic>& adjustments, std::ostream& err) {
  for (const auto& a : adjustments) err << "note: " << a.field << ": " << a.message << "\n";
}

}  // namespace plansight::cli
