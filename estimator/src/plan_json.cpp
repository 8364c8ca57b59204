// Plan files: {"model": NAME | {...}, "cluster": {"system": NAME, "gpu": NAME | {...}, ...},
// "layout": {...}, "training": {...}}. A plan is an overlay on the default plan. When it
// replaces the model, or sets a GPU count the layout does not divide, the layout starts from
// plain data parallelism (tp = pp = 1) and takes only the layout fields given, rather than the
// default's TP8 x PP8; a GPU count the layout divides keeps it. Every such change is reported.
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

void append(std::vector<Diagnostic>& to, const std::vector<Diagnostic>& from, const std::string& field) {
  for (auto d : from) {
    if (d.field.empty() || d.field == "model" || d.field == "gpu" || d.field == "system") d.field = field;
    to.push_back(std::move(d));
  }
}

// Reads "model" into plan.model and returns the name of the model it starts from: the preset
// named (the plan's own model when none is given); an object without "preset" is its own base.
// Overriding fields of a preset keeps the preset as the base, so the layout is kept; the model
// itself is renamed by read_model (model_derivation.h) when its structure changed.
std::string read_model_entry(JsonReader& root, Plan& plan, std::vector<Diagnostic>& errors) {
  const auto* model = root.get("model");
  if (!model) return plan.model.name;
  if (model->is_string()) {
    auto found = find_model(model->get<std::string>());
    if (found) plan.model = *found; else append(errors, found.errors(), "model");
    return plan.model.name;
  }
  auto in = root.child("model");
  if (!in) return plan.model.name;
  ModelSpec spec;  // a model object without "preset" defines every field itself
  spec.name = "custom";
  if (const auto* preset = in->get("preset")) {
    auto found = preset->is_string() ? find_model(preset->get<std::string>()) : Result<ModelSpec>(make_error("", "expected a model preset name"));
    if (found) spec = *found; else append(errors, found.errors(), "model.preset");
  }
  const bool has_preset = in->has("preset");
  const std::string base = spec.name;
  read_model(*in, spec);
  plan.model = spec;
  return has_preset ? base : spec.name;
}

// Where a GPU given by its numbers takes efficiencies it lacks (plan files written before they
// were GPU fields): from the preset of the same name, else an unmeasured GPU's defaults; said in
// an adjustment, so that a reader of the file knows which numbers it ran with.
void note_namesake(const std::string& field, const std::string& gpu, bool found, std::vector<Diagnostic>* adjustments) {
  if (!adjustments) return;
  adjustments->push_back(make_warning(
      field, found ? "not in the file (written before it was a GPU field): the value of the preset \"" + gpu +
                         "\", whose name the GPU carries"
                   : "not in the file (written before it was a GPU field), and no preset is named \"" + gpu +
                         "\": the defaults of a GPU without measurements"));
}

void read_cluster_entry(JsonReader& root, Plan& plan, std::vector<Diagnostic>& errors,
                        std::vector<Diagnostic>* adjustments) {
  auto in = root.child("cluster");
  if (!in) return;
  in->reject_unknown({"system", "source", "gpu", "gpus", "gpus_per_node", "intra_node_gb_per_s", "inter_node_gb_per_s",
                      "intra_node_latency_us", "inter_node_latency_us", "price_per_gpu_hour", "currency",
                      "shared_processors", "host_link_gb_per_s", "host_memory_gib", "host_memory_gb_per_s"});
  const std::int64_t gpus = plan.cluster.gpus;
  const auto* system = in->get("system");
  if (system && system->is_string() && (system->get<std::string>().empty() || system->get<std::string>() == "custom")) {
    system = nullptr;  // a cluster described by its own numbers, as to_json writes it
  }
  if (system) {
    auto found = system->is_string() ? find_system(system->get<std::string>()) : Result<SystemPreset>(make_error("", "expected a system preset name"));
    if (found) {
      plan.cluster = found->cluster;
      plan.cluster.gpus = gpus;
    } else {
      append(errors, found.errors(), "cluster.system");
    }
  }
  if (const auto* gpu = in->get("gpu")) {
    GpuSpec spec = plan.cluster.gpu;
    if (gpu->is_string()) {
      auto found = find_gpu(gpu->get<std::string>());
      if (found) spec = *found; else append(errors, found.errors(), "cluster.gpu");
    } else if (auto g = in->child("gpu")) {
      const bool from_preset = g->has("preset");
      if (const auto* preset = g->get("preset")) {
        auto found = preset->is_string() ? find_gpu(preset->get<std::string>()) : Result<GpuSpec>(make_error("", "expected a GPU preset name"));
        if (found) spec = *found; else append(errors, found.errors(), "cluster.gpu.preset");
      }
      read_gpu(*g, spec);
      if (!from_preset && !g->has("efficiency")) {
        // A GPU given by its numbers without efficiencies (plan files written before they were
        // a GPU field): its namesake preset's, else the defaults for an unmeasured GPU.
        auto namesake = find_gpu(spec.name);
        spec.efficiency = namesake ? namesake->efficiency : GpuEfficiency{};
        note_namesake("cluster.gpu.efficiency", spec.name, namesake.ok(), adjustments);
      } else if (!from_preset) {
        // Efficiencies without the in-step slowdown (plan files written before it was a GPU
        // field, when every GPU had the A100's): the namesake preset's, else the default.
        auto e = g->child("efficiency");
        if (e && !e->has("in_step_slowdown")) {
          auto namesake = find_gpu(spec.name);
          spec.efficiency.in_step_slowdown = namesake ? namesake->efficiency.in_step_slowdown : GpuEfficiency{}.in_step_slowdown;
          note_namesake("cluster.gpu.efficiency.in_step_slowdown", spec.name, namesake.ok(), adjustments);
        }
      }
    }
    if (!system) {
      // A GPU without a system: a generic node of that GPU, NVLink inside it when it has any.
      plan.cluster.name = "custom";
      plan.cluster.source = "";
      if (spec.nvlink_bandwidth_bytes_per_s > 0) plan.cluster.intra_node_bandwidth_bytes_per_s = spec.nvlink_bandwidth_bytes_per_s;
    }
    plan.cluster.gpu = spec;
  }
  read_cluster(*in, plan.cluster);
}

// The layout fields reset (or the throughput dropped) on the user's behalf, one note each:
// those that changed and that the plan did not give itself.
void note_changes(const nlohmann::json& before, const nlohmann::json& after, const nlohmann::json* given,
                  const std::string& section, const std::string& why, std::vector<Diagnostic>& out) {
  for (const auto& [key, old_value] : before.items()) {
    if (key == "dp") continue;  // derived from the GPU count either way
    if (!after.contains(key) || after[key] == old_value) continue;
    if (given && given->is_object() && given->contains(key)) continue;
    out.push_back(make_warning(section + "." + key, "set to " + after[key].dump() + " (was " + old_value.dump() +
                                                        "): " + why + "; give " + section + "." + key +
                                                        " to choose it"));
  }
}

}  // namespace

Result<Plan> plan_from_json(const nlohmann::json& json, std::vector<Diagnostic>* adjustments) {
  std::vector<Diagnostic> errors;
  if (!json.is_object()) return make_error("plan", "expected a JSON object, got " + describe_json(json));
  Plan plan = default_plan();
  JsonReader root(json, "", errors);
  root.reject_unknown({"name", "description", "model", "cluster", "layout", "training"});

  const std::string default_model = plan.model.name;
  const std::string default_gpu = plan.cluster.gpu.name;
  const std::string base_model = read_model_entry(root, plan, errors);
  const auto* cluster = root.get("cluster");
  const bool gpus_changed = cluster && cluster->is_object() && cluster->contains("gpus");
  read_cluster_entry(root, plan, errors, adjustments);
  const bool model_replaced = base_model != default_model;
  const LayoutSpec& l = plan.layout;
  const std::int64_t model_parallel = l.tp * l.pp * l.cp;
  // A new GPU count keeps the layout when it still divides it (only DP follows); the default's
  // TP 8 x PP 8 belongs to GPT-3 175B, so a replaced model starts from plain data parallelism.
  // An invalid count (below 1) changes nothing else: validation reports it.
  const bool gpus_break_layout = gpus_changed && plan.cluster.gpus >= 1 && plan.cluster.gpus % model_parallel != 0;
  const nlohmann::json layout_before = to_json(plan.layout);
  if (model_replaced || gpus_break_layout) plan.layout = LayoutSpec{};
  if (auto layout = root.child("layout")) read_layout(*layout, plan.layout);
  const auto* layout = root.get("layout");
  if (!layout || !layout->is_object() || !layout->contains("dp")) plan.layout.dp = 0;  // derive DP
  if (adjustments && (model_replaced || gpus_break_layout)) {
    const std::string why = model_replaced
                                ? "the model was replaced, so the layout starts from plain data parallelism"
                                : "cluster.gpus " + std::to_string(plan.cluster.gpus) +
                                      " is not a multiple of the layout's tp*pp*cp = " + std::to_string(model_parallel) +
                                      ", so the layout starts from plain data parallelism";
    note_changes(layout_before, to_json(plan.layout), layout, "layout", why, *adjustments);
  }
  // More than one virtual stage runs only interleaved: "vpp": 2 without a schedule means that
  // schedule, in a plan file as with --vpp 2 (layout_spec.h: schedule_for_vpp).
  if (layout && layout->is_object() && layout->contains("vpp") && !layout->contains("schedule")) {
    const PipelineSchedule before = plan.layout.schedule;
    plan.layout.schedule = schedule_for_vpp(plan.layout.vpp, plan.layout.schedule);
    if (adjustments && plan.layout.schedule != before) {
      adjustments->push_back(make_warning("layout.schedule", "set to \"interleaved\": vpp " + std::to_string(plan.layout.vpp) +
                                                                 " runs only interleaved; give layout.schedule to choose"));
    }
  }
  // DualPipe(V) runs two virtual stages: "schedule": "dualpipe(v)" without "vpp" means vpp 2.
  if (layout && layout->is_object() && layout->contains("schedule") && !layout->contains("vpp")) {
    const std::int64_t before = plan.layout.vpp;
    plan.layout.vpp = vpp_for_schedule(plan.layout.schedule, plan.layout.schedule, plan.layout.vpp);
    if (adjustments && plan.layout.vpp != before) {
      adjustments->push_back(make_warning("layout.vpp", "set to 2: schedule " + std::string(to_string(plan.layout.schedule)) +
                                                            " runs two chunks per rank"));
    }
  }
  // The default plan's 140 TFLOP/s is a measurement of GPT-3-like models on A100s; it does not
  // carry over to another model or GPU.
  if (model_replaced || plan.cluster.gpu.name != default_gpu) {
    plan.training.achieved_tflops = 0;
    plan.training.mfu = 0;
  }
  if (auto training = root.child("training")) read_training(*training, plan.training);
  if (plan.model.max_seq_len == 0) plan.model.max_seq_len = plan.training.seq_len;

  if (!errors.empty()) return errors;
  return plan;
}

Result<Plan> parse_plan(std::string_view text, std::vector<Diagnostic>* adjustments) {
  auto json = parse_json_text(text, "plan");
  if (!json) return json.errors();
  return plan_from_json(*json, adjustments);
}

nlohmann::json to_json(const Plan& plan) {
  return {{"model", to_json(plan.model)},
          {"cluster", to_json(plan.cluster)},
          {"layout", to_json(plan.layout)},
          {"training", to_json(plan.training)}};
}

}  // namespace plansight::estimator
