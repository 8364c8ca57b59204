// JSON (de)serialisation of the vocabulary. Readers collect every bad field as a Diagnostic;
// plan files may name presets ("model": "llama-3.1-8b", "cluster": {"system": "dgx-h100"}).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

nlohmann::json to_json(const ModelSpec& model);
nlohmann::json to_json(const MoeSpec& moe);
nlohmann::json to_json(const MlaSpec& mla);
nlohmann::json to_json(const GpuSpec& gpu);
nlohmann::json to_json(const ClusterSpec& cluster);
nlohmann::json to_json(const LayoutSpec& layout);
nlohmann::json to_json(const TrainingSpec& training);
nlohmann::json to_json(const Plan& plan);
nlohmann::json to_json(const MemoryBreakdown& memory);
nlohmann::json to_json(const Estimate& estimate);
nlohmann::json to_json(const Diagnostic& diagnostic);

// Each fills `out` (which holds the defaults) from the reader's object.
void read_model(JsonReader& in, ModelSpec& out);
void read_moe(JsonReader& in, MoeSpec& out);
void read_mla(JsonReader& in, MlaSpec& out);
void read_gpu(JsonReader& in, GpuSpec& out);
void read_cluster(JsonReader& in, ClusterSpec& out);
void read_layout(JsonReader& in, LayoutSpec& out);
void read_training(JsonReader& in, TrainingSpec& out);

// A plan from JSON; fields not given keep default_plan()'s values. Fields the reader changes on
// the user's behalf (a replaced model starts the layout from plain data parallelism; a GPU
// count the layout does not divide does too) are appended to `adjustments` as warnings naming the field, the new and
// the old value and why, so that every face can show them.
Result<Plan> plan_from_json(const nlohmann::json& json, std::vector<Diagnostic>* adjustments = nullptr);
Result<Plan> parse_plan(std::string_view text, std::vector<Diagnostic>* adjustments = nullptr);

}  // namespace plansight::estimator
