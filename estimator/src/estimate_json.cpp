// JSON of an Estimate: the stable contract of `plansight estimate --json`.
#include "plansight/estimator/json_io.h"

namespace plansight::estimator {

nlohmann::json to_json(const MemoryBreakdown& m) {
  return {{"weights_bytes", m.weights_bytes},     {"gradients_bytes", m.gradients_bytes},
          {"optimizer_bytes", m.optimizer_bytes}, {"activations_bytes", m.activations_bytes},
          {"buffers_bytes", m.buffers_bytes},     {"reserve_bytes", m.reserve_bytes},
          {"total_bytes", m.total_bytes()}};
}

nlohmann::json to_json(const Diagnostic& d) {
  return {{"severity", d.severity == Severity::error ? "error" : "warning"}, {"field", d.field}, {"message", d.message}};
}

nlohmann::json to_json(const Estimate& e) {
  nlohmann::json memory = to_json(e.memory.peak);
  memory["capacity_bytes"] = e.memory.capacity_bytes;
  memory["fits"] = e.memory.fits;
  memory["most_loaded_stage"] = e.memory.most_loaded_stage;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : e.memory.stages) {
    nlohmann::json j = to_json(s.memory);
    j["stage"] = s.stage;
    j["layers"] = s.layers;
    j["parameters"] = s.parameters;
    j["in_flight_micro_batches"] = s.in_flight_micro_batches;
    j["capacity_bytes"] = e.memory.capacity_bytes;
    j["fits"] = s.memory.total_bytes() <= e.memory.capacity_bytes;
    stages.push_back(std::move(j));
  }
  memory["stages"] = std::move(stages);
  if (e.memory.host_bytes_per_node > 0) {
    // Offloading plans only, so other plans keep their JSON.
    memory["host"] = {{"bytes_per_node", e.memory.host_bytes_per_node},
                      {"capacity_bytes", e.memory.host_capacity_bytes},
                      {"fits", e.memory.host_fits}};
  }

  nlohmann::json time;
  const auto& t = e.time;
  auto value = [&](double v) { return t.available ? nlohmann::json(v) : nlohmann::json(nullptr); };
  time["iteration_s"] = value(t.iteration_s);
  time["tokens_per_s"] = value(t.tokens_per_s);
  time["mfu"] = value(t.mfu);
  time["hfu"] = value(t.hfu);
  time["achieved_tflops_per_gpu"] = value(t.achieved_tflops_per_gpu);
  time["training_days"] = value(t.training_days);
  time["gpu_hours"] = value(t.gpu_hours);
  time["cost"] = value(t.cost);
  time["currency"] = t.available && !t.currency.empty() ? nlohmann::json(t.currency) : nlohmann::json(nullptr);
  time["source"] = !t.available ? nlohmann::json(nullptr) : nlohmann::json(t.predicted ? "predicted" : "given throughput");
  if (t.predicted) {
    const auto& b = t.breakdown;
    time["bubble_fraction"] = t.bubble_fraction;
    time["bubble_fraction_max"] = t.bubble_fraction_max;
    time["breakdown"] = {{"compute_s", b.compute_s}, {"tp_comm_s", b.tp_comm_s}, {"cp_comm_s", b.cp_comm_s},
                         {"pp_comm_s", b.pp_comm_s}, {"dp_comm_s", b.dp_comm_s}, {"bubble_s", b.bubble_s},
                         {"optimizer_s", b.optimizer_s}};
    if (b.ep_comm_s > 0) time["breakdown"]["ep_comm_s"] = b.ep_comm_s;  // MoE plans only
    if (b.offload_s > 0) time["breakdown"]["offload_s"] = b.offload_s;  // offloading plans only
    // Bytes one GPU of the first stage sends per iteration, by group (TimeBreakdown).
    time["communication_bytes"] = {{"tp", b.tp_bytes}, {"cp", b.cp_bytes}, {"pp", b.pp_bytes}, {"dp", b.dp_bytes}};
    if (b.ep_bytes > 0) time["communication_bytes"]["ep"] = b.ep_bytes;
  } else {
    time["bubble_fraction"] = nullptr;
    time["bubble_fraction_max"] = nullptr;
    time["breakdown"] = nullptr;
    time["communication_bytes"] = nullptr;
  }

  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : e.warnings) warnings.push_back(to_json(w));

  nlohmann::json out = {{"parameters", e.parameters},
          {"parameters_padded", e.parameters_padded},
          {"padded_vocab", e.padded_vocab},
          {"dp", e.dp},
          {"micro_batches", e.micro_batches},
          {"memory", std::move(memory)},
          {"flops", {{"model_per_iteration", e.flops.model_per_iteration}, {"hardware_per_iteration", e.flops.hardware_per_iteration}}},
          {"time", std::move(time)},
          {"warnings", std::move(warnings)}};
  if (e.active_parameters != e.parameters) out["active_parameters"] = e.active_parameters;  // MoE models
  return out;
}

}  // namespace plansight::estimator
