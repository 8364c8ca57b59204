// MoeSpec: the mixture-of-experts part of a model (routed and shared experts, which layers are
// MoE, router, capacity and load imbalance); MlaSpec: DeepSeek's multi-head latent attention.
// Field meanings follow DeepSeek-V3 (arXiv:2412.19437, Sec. 2.1) and Hugging Face's
// configuration_deepseek_v3 / configuration_mixtral / configuration_qwen3_moe. experts = 0 and
// kv_lora_rank = 0 leave a dense model with standard attention, costed exactly as before.
#pragma once

#include <cstdint>

namespace plansight::estimator {

struct MoeSpec {
  std::int64_t experts = 0;            // routed experts per MoE layer; 0: a dense model
  std::int64_t top_k = 0;              // routed experts each token is sent to
  std::int64_t expert_ffn_hidden = 0;  // intermediate width of one routed expert
  std::int64_t shared_experts = 0;     // experts every token passes through (DeepSeek: 1)
  std::int64_t shared_expert_ffn_hidden = 0;  // width of one shared expert; 0: expert_ffn_hidden
  bool shared_expert_gate = false;     // Qwen2-MoE's sigmoid gate Linear(hidden, 1) on the shared expert
  // Layer i (from 0) is an MoE layer when i >= first_dense_layers and
  // (i - first_dense_layers + 1) % layer_interval == 0 (Qwen2-MoE decoder_sparse_step, Llama 4
  // interleave_moe_layer_step; DeepSeek first_k_dense_replace with moe_layer_freq 1).
  std::int64_t first_dense_layers = 0;
  std::int64_t layer_interval = 1;
  bool router_bias = false;        // gpt-oss: the router Linear has a bias
  bool router_score_bias = false;  // DeepSeek-V3's e_score_correction_bias (auxiliary-loss-free balancing)
  // Megatron-Core --moe-expert-capacity-factor: each expert takes at most capacity_factor times
  // its mean share of tokens and drops the rest; 0 is dropless.
  double capacity_factor = 0;
  // Assumed max/mean tokens per expert: the most loaded GPU's experts receive this many times
  // the mean (1 = perfectly balanced). Activations and expert compute scale with it.
  double load_imbalance = 1.0;

  bool enabled() const { return experts > 0; }
  std::int64_t effective_shared_ffn_hidden() const {
    return shared_expert_ffn_hidden > 0 ? shared_expert_ffn_hidden : expert_ffn_hidden;
  }
  // The max/mean token factor the busiest expert processes: the imbalance, capped by the
  // capacity when tokens are dropped.
  double effective_imbalance() const {
    return capacity_factor > 0 && capacity_factor < load_imbalance ? capacity_factor : load_imbalance;
  }
  bool operator==(const MoeSpec&) const = default;
};

// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1.2): queries through a
// rank-q_lora_rank bottleneck (0: a full q projection), keys and values through a shared
// rank-kv_lora_rank latent, each head with qk_nope_head_dim + qk_rope_head_dim query/key
// dimensions and v_head_dim value dimensions.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;  // 0: no MLA
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  bool enabled() const { return kv_lora_rank > 0; }
  std::int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const MlaSpec&) const = default;
};

}  // namespace plansight::estimator
