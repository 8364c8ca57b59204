// Presets of models, GPUs and systems, read from the JSON files in assets/presets (embedded in
// the library at build time), and the built-in default plan.
#pragma once

#include <string_view>
#include <vector>

#include "plansight/estimator/cluster_spec.h"
#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/model_spec.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct SystemPreset {
  std::string name;
  std::string description;
  std::string source;
  std::string gpu;  // GPU preset name
  ClusterSpec cluster;  // with gpus = gpus_per_node (one node) until a plan says otherwise
};

const std::vector<ModelSpec>& model_presets();
const std::vector<GpuSpec>& gpu_presets();
const std::vector<SystemPreset>& system_presets();

// Lookups are case-insensitive; the error lists the valid names.
Result<ModelSpec> find_model(std::string_view name);
Result<GpuSpec> find_gpu(std::string_view name);
Result<SystemPreset> find_system(std::string_view name);

// GPT-3 175B on 1024 A100-80GB (Selene-like DGX A100 nodes), Narayanan et al. 2021.
Plan default_plan();

// Problems found while loading the embedded presets (empty when they are all well-formed).
const std::vector<Diagnostic>& preset_load_errors();

}  // namespace plansight::estimator
