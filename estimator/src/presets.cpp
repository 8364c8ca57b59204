// Presets from the embedded assets/presets/*.json, parsed once on first use. A malformed preset
// is a build defect: it is reported by preset_load_errors() (tested) and left out of the lists.
#include "plansight/estimator/presets.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include "plansight/estimator/json_io.h"

namespace plansight::assets {
std::string_view embedded_file(std::string_view file_name);
}

namespace plansight::estimator {
namespace {

struct Presets {
  std::vector<ModelSpec> models;
  std::vector<GpuSpec> gpus;
  std::vector<SystemPreset> systems;
  std::vector<Diagnostic> errors;
};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Calls `each(reader, index)` for every object of the array `key` in the embedded `file`.
template <class Each>
void for_each_entry(std::string_view file, const char* key, std::vector<Diagnostic>& errors, Each each) {
  const std::string_view text = assets::embedded_file(file);
  auto json = parse_json_text(text, file);
  if (!json) {
    errors.insert(errors.end(), json.errors().begin(), json.errors().end());
    return;
  }
  if (!json->is_object() || !json->contains(key) || !(*json)[key].is_array()) {
    errors.push_back(make_error(std::string(file), std::string("expected an object with an array \"") + key + "\""));
    return;
  }
  const auto& list = (*json)[key];
  for (std::size_t i = 0; i < list.size(); ++i) {
    JsonReader reader(list[i], std::string(file) + "." + key + "[" + std::to_string(i) + "]", errors);
    if (!list[i].is_object() || !list[i].contains("name") || !list[i].contains("source")) {
      reader.error("name", "every preset needs a name and a source");
      continue;
    }
    each(reader);
  }
}

Presets load() {
  Presets p;
  for_each_entry("gpus.json", "gpus", p.errors, [&](JsonReader& in) {
    GpuSpec gpu;
    read_gpu(in, gpu);
    p.gpus.push_back(std::move(gpu));
  });
  for_each_entry("models.json", "models", p.errors, [&](JsonReader& in) {
    ModelSpec model;
    read_model(in, model);
    if (!in.has("kv_heads")) model.kv_heads = model.heads;
    p.models.push_back(std::move(model));
  });
  for_each_entry("systems.json", "systems", p.errors, [&](JsonReader& in) {
    in.reject_unknown({"name", "description", "source", "gpu", "gpus_per_node", "intra_node_gb_per_s",
                       "inter_node_gb_per_s", "intra_node_latency_us", "inter_node_latency_us", "price_per_gpu_hour",
                       "host_link_gb_per_s", "host_memory_gib", "host_memory_gb_per_s"});
    SystemPreset system;
    in.read("name", system.name);
    in.read("description", system.description);
    in.read("source", system.source);
    in.read("gpu", system.gpu);
    auto gpu = std::find_if(p.gpus.begin(), p.gpus.end(), [&](const GpuSpec& g) { return same_name(g.name, system.gpu); });
    if (gpu == p.gpus.end()) {
      in.error("gpu", "unknown GPU preset \"" + system.gpu + "\"");
      return;
    }
    system.cluster.name = system.name;
    system.cluster.source = system.source;
    system.cluster.gpu = *gpu;
    read_cluster(in, system.cluster);
    system.cluster.gpus = system.cluster.gpus_per_node;
    p.systems.push_back(std::move(system));
  });
  return p;
}

const Presets& presets() {
  static const Presets instance = load();  // thread-safe since C++11
  return instance;
}

template <class T, class Name>
Result<T> find(const std::vector<T>& list, std::string_view name, const char* what, Name name_of) {
  for (const auto& item : list) {
    if (same_name(name_of(item), name)) return item;
  }
  std::string valid;
  for (const auto& item : list) valid += (valid.empty() ? "" : ", ") + name_of(item);
  return make_error(what, "unknown " + std::string(what) + " \"" + std::string(name) + "\"; valid: " + valid);
}

}  // namespace

const std::vector<ModelSpec>& model_presets() { return presets().models; }
const std::vector<GpuSpec>& gpu_presets() { return presets().gpus; }
const std::vector<SystemPreset>& system_presets() { return presets().systems; }
const std::vector<Diagnostic>& preset_load_errors() { return presets().errors; }

Result<ModelSpec> find_model(std::string_view name) {
  return find(model_presets(), name, "model", [](const ModelSpec& m) { return m.name; });
}
Result<GpuSpec> find_gpu(std::string_view name) {
  return find(gpu_presets(), name, "gpu", [](const GpuSpec& g) { return g.name; });
}
Result<SystemPreset> find_system(std::string_view name) {
  return find(system_presets(), name, "system", [](const SystemPreset& s) { return s.name; });
}

Plan default_plan() {
  // GPT-3 175B (Brown et al. 2020) on 1024 A100-80GB in Selene-like DGX A100 nodes, as in
  // Narayanan et al. 2021 Sec. 5.1's training-time example: batch 1536, 300B tokens (the paper
  // assumes 140 TFLOP/s per GPU -> about 34 days; the time model predicts it instead). TP8 x PP8
  // with full recomputation follows the paper's layouts for models of this size (Table 1).
  Plan plan;
  if (auto model = find_model("gpt3-175b")) plan.model = *model;
  if (auto system = find_system("selene")) plan.cluster = system->cluster;
  plan.cluster.gpus = 1024;
  plan.layout.tp = 8;
  plan.layout.pp = 8;
  plan.layout.recompute = Recompute::full;
  plan.layout.schedule = PipelineSchedule::one_f_one_b;
  plan.training.micro_batch = 1;
  plan.training.global_batch = 1536;
  plan.training.seq_len = 2048;
  plan.training.tokens = 300e9;
  plan.training.precision = Precision::fp16;
  plan.training.grad_precision = Precision::fp16;
  plan.training.attention = AttentionKernel::standard;
  return plan;
}

}  // namespace plansight::estimator
