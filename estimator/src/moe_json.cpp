// JSON of the MoE and MLA parts of a model ("model.moe", "model.mla"). Written only for models
// that have them, so a dense model's JSON is what it always was; read with the same typed
// reader as every other field (ranges are validate()'s).
#include "plansight/estimator/json_io.h"

namespace plansight::estimator {

nlohmann::json to_json(const MoeSpec& e) {
  return {{"experts", e.experts},
          {"top_k", e.top_k},
          {"expert_ffn_hidden", e.expert_ffn_hidden},
          {"shared_experts", e.shared_experts},
          {"shared_expert_ffn_hidden", e.effective_shared_ffn_hidden()},
          {"shared_expert_gate", e.shared_expert_gate},
          {"first_dense_layers", e.first_dense_layers},
          {"layer_interval", e.layer_interval},
          {"router_bias", e.router_bias},
          {"router_score_bias", e.router_score_bias},
          {"capacity_factor", e.capacity_factor},
          {"load_imbalance", e.load_imbalance}};
}

nlohmann::json to_json(const MlaSpec& a) {
  return {{"q_lora_rank", a.q_lora_rank},
          {"kv_lora_rank", a.kv_lora_rank},
          {"qk_nope_head_dim", a.qk_nope_head_dim},
          {"qk_rope_head_dim", a.qk_rope_head_dim},
          {"v_head_dim", a.v_head_dim}};
}

void read_moe(JsonReader& in, MoeSpec& e) {
  in.reject_unknown({"experts", "top_k", "expert_ffn_hidden", "shared_experts", "shared_expert_ffn_hidden",
                     "shared_expert_gate", "first_dense_layers", "layer_interval", "router_bias", "router_score_bias",
                     "capacity_factor", "load_imbalance"});
  in.read("experts", e.experts);
  in.read("top_k", e.top_k);
  in.read("expert_ffn_hidden", e.expert_ffn_hidden);
  in.read("shared_experts", e.shared_experts);
  in.read("shared_expert_ffn_hidden", e.shared_expert_ffn_hidden);
  in.read("shared_expert_gate", e.shared_expert_gate);
  in.read("first_dense_layers", e.first_dense_layers);
  in.read("layer_interval", e.layer_interval);
  in.read("router_bias", e.router_bias);
  in.read("router_score_bias", e.router_score_bias);
  in.read("capacity_factor", e.capacity_factor);
  in.read("load_imbalance", e.load_imbalance);
}

void read_mla(JsonReader& in, MlaSpec& a) {
  in.reject_unknown({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  in.read("q_lora_rank", a.q_lora_rank);
  in.read("kv_lora_rank", a.kv_lora_rank);
  in.read("qk_nope_head_dim", a.qk_nope_head_dim);
  in.read("qk_rope_head_dim", a.qk_rope_head_dim);
  in.read("v_head_dim", a.v_head_dim);
}

}  // namespace plansight::estimator
