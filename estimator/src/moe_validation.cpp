// MoE / MLA / MTP model rules. Ranges follow what the fields can mean: top_k among the experts,
// an imbalance between perfectly balanced (1) and every token on the same top_k experts
// (experts / top_k, the largest max/mean possible), MLA dimensions positive once MLA is on.
#include "moe_validation.h"

#include <numeric>
#include <string>

#include "plansight/estimator/json_reader.h"

namespace plansight::estimator {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

constexpr std::int64_t kMaxSize = std::int64_t{1} << 30;

void range(std::vector<Diagnostic>& out, const char* field, std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value < min || value > max) {
    out.push_back(make_error(field, "value " + str(value) + " is invalid; valid: a whole number from " + str(min) +
                                        " to " + str(max)));
  }
}

void validate_moe(const ModelSpec& m, std::vector<Diagnostic>& out) {
  const MoeSpec& e = m.moe;
  range(out, "model.moe.experts", e.experts, 0, 1 << 20);
  if (e.experts <= 0) {
    // Any other expert field without experts is a half-written MoE model, not a dense one.
    const bool stray = e.top_k != 0 || e.expert_ffn_hidden != 0 || e.shared_experts != 0;
    if (stray) {
      out.push_back(make_error("model.moe.experts", "value " + str(e.experts) +
                                                        " but top_k, expert_ffn_hidden or shared_experts is set; "
                                                        "valid: experts >= 1 for an MoE model, or all of them 0"));
    }
    return;
  }
  range(out, "model.moe.top_k", e.top_k, 1, e.experts);
  range(out, "model.moe.expert_ffn_hidden", e.expert_ffn_hidden, 1, kMaxSize);
  range(out, "model.moe.shared_experts", e.shared_experts, 0, 1 << 10);
  range(out, "model.moe.shared_expert_ffn_hidden", e.shared_expert_ffn_hidden, 0, kMaxSize);
  range(out, "model.moe.first_dense_layers", e.first_dense_layers, 0, m.layers > 0 ? m.layers : 0);
  range(out, "model.moe.layer_interval", e.layer_interval, 1, 1 << 20);
  if (!(e.capacity_factor == 0 || (e.capacity_factor > 0 && e.capacity_factor <= 1e6))) {
    out.push_back(make_error("model.moe.capacity_factor", "value " + describe_number(e.capacity_factor) +
                                                              " is invalid; valid: 0 (dropless) or a positive factor"));
  }
  if (e.top_k >= 1 && e.top_k <= e.experts) {
    const double max_imbalance = static_cast<double>(e.experts) / static_cast<double>(e.top_k);
    if (!(e.load_imbalance >= 1.0 && e.load_imbalance <= max_imbalance)) {
      out.push_back(make_error("model.moe.load_imbalance",
                               "value " + describe_number(e.load_imbalance) + " is invalid; valid: " +
                                   describe_range(1.0, max_imbalance) +
                                   " (max/mean tokens per expert: 1 balanced, experts/top_k all on the same experts)"));
    }
  }
  if (m.layers > 0 && e.first_dense_layers >= 0 && e.layer_interval >= 1 && m.moe_layers_in(0, m.layers) == 0) {
    out.push_back(make_warning("model.moe.first_dense_layers",
                               "no layer is an MoE layer (first_dense_layers " + str(e.first_dense_layers) +
                                   ", layer_interval " + str(e.layer_interval) + ", layers " + str(m.layers) + ")"));
  }
}

void validate_mla(const ModelSpec& m, std::vector<Diagnostic>& out) {
  const MlaSpec& a = m.mla;
  range(out, "model.mla.kv_lora_rank", a.kv_lora_rank, 0, kMaxSize);
  if (a.kv_lora_rank <= 0) {
    if (a.q_lora_rank != 0 || a.qk_nope_head_dim != 0 || a.qk_rope_head_dim != 0 || a.v_head_dim != 0) {
      out.push_back(make_error("model.mla.kv_lora_rank", "value " + str(a.kv_lora_rank) +
                                                             " but other mla fields are set; valid: kv_lora_rank >= 1 "
                                                             "for multi-head latent attention, or all mla fields 0"));
    }
    return;
  }
  range(out, "model.mla.q_lora_rank", a.q_lora_rank, 0, kMaxSize);
  range(out, "model.mla.qk_nope_head_dim", a.qk_nope_head_dim, 1, kMaxSize);
  range(out, "model.mla.qk_rope_head_dim", a.qk_rope_head_dim, 1, kMaxSize);
  range(out, "model.mla.v_head_dim", a.v_head_dim, 1, kMaxSize);
}

std::string divisors(std::int64_t n, std::int64_t limit) {
  std::string out;
  for (std::int64_t d = 1; d <= n && d <= limit; ++d) {
    if (n % d == 0) out += (out.empty() ? "" : ", ") + str(d);
  }
  return out;
}

}  // namespace

// Megatron-Core's rules (megatron/training/arguments.py and parallel_state.py):
//  - num_experts % expert_model_parallel_size == 0;
//  - the ranks of one pipeline stage (tp*cp*dp) are regrouped as etp x ep x expert-dp, so
//    ep*etp divides tp*cp*dp;
//  - expert FFN columns are split over etp (moe_ffn_hidden_size % etp == 0);
//  - "When using MoE and tensor parallelism, sequence parallelism must be used".
void validate_expert_layout(const Plan& p, std::vector<Diagnostic>& out) {
  const LayoutSpec& l = p.layout;
  const MoeSpec& e = p.model.moe;
  if (l.ep < 1 || l.ep > (1 << 20)) {
    range(out, "layout.ep", l.ep, 1, 1 << 20);
    return;
  }
  if (l.etp < 0 || l.etp > (1 << 20)) {
    out.push_back(make_error("layout.etp", "value " + str(l.etp) + " is invalid; valid: 0 (= tp) or a whole number from 1 to " +
                                               str(1 << 20)));
    return;
  }
  // Megatron-Core's combined 1F1B checks: EP > 1 (there is no all-to-all to hide otherwise) and,
  // with pipeline parallelism, virtual stages (user guide, "Combined 1F1B: Expert-Parallel
  // All-to-All Overlap", compatibility rules).
  if (l.ep_overlap && l.ep <= 1) {
    out.push_back(make_error("layout.ep_overlap", "true with ep = " + str(l.ep) +
                                                      ": there is no expert all-to-all to overlap; valid: false, or ep > 1"));
  } else if (l.ep_overlap && l.pp > 1 && l.vpp <= 1) {
    out.push_back(make_error("layout.ep_overlap", "true with pp = " + str(l.pp) +
                                                      " and vpp 1: Megatron-Core pairs the micro-batches of the interleaved "
                                                      "schedule only; valid: false, or vpp > 1"));
  }
  if (!e.enabled()) {
    if (l.ep != 1) out.push_back(make_error("layout.ep", "value " + str(l.ep) + " needs a model with routed experts (model.moe.experts is 0); valid: 1"));
    if (l.etp > 1) out.push_back(make_error("layout.etp", "value " + str(l.etp) + " needs a model with routed experts (model.moe.experts is 0); valid: 0 or 1"));
    return;
  }
  if (e.experts < 1) return;  // reported by validate_moe_model
  if (e.experts % l.ep != 0) {
    out.push_back(make_error("layout.ep", "value " + str(l.ep) + " must divide model.moe.experts (" + str(e.experts) +
                                              "); valid: " + divisors(e.experts, 1 << 20)));
  }
  const std::int64_t etp = l.expert_tp();
  if (e.expert_ffn_hidden > 0 && e.expert_ffn_hidden % etp != 0) {
    out.push_back(make_error("layout.etp", "value " + str(etp) + " must divide model.moe.expert_ffn_hidden (" +
                                               str(e.expert_ffn_hidden) + ")"));
  }
  if (e.shared_experts > 0 && e.effective_shared_ffn_hidden() % l.tp != 0) {
    out.push_back(make_error("layout.tp", "value " + str(l.tp) + " must divide model.moe.shared_expert_ffn_hidden (" +
                                              str(e.effective_shared_ffn_hidden()) + "): shared experts are split over tp"));
  }
  const std::int64_t stage_ranks = l.tp * l.cp * p.dp();
  if (p.cluster.gpus >= 1 && stage_ranks % (l.ep * etp) != 0) {
    out.push_back(make_error("layout.ep", "ep*etp = " + str(l.ep * etp) + " must divide tp*cp*dp = " + str(stage_ranks) +
                                              " (the ranks of one pipeline stage, regrouped for the experts); valid ep with etp " +
                                              str(etp) + ": " + divisors(std::gcd(stage_ranks % etp == 0 ? stage_ranks / etp : 1, e.experts), 1 << 20)));
  }
  if (l.tp > 1 && !l.sequence_parallel) {
    out.push_back(make_error("layout.sequence_parallel", "false with tp = " + str(l.tp) +
                                                             " on an MoE model; valid: true (Megatron-Core requires sequence "
                                                             "parallelism with MoE and tensor parallelism)"));
  }
}

void validate_moe_model(const ModelSpec& m, std::vector<Diagnostic>& out) {
  validate_moe(m, out);
  validate_mla(m, out);
  range(out, "model.mtp_modules", m.mtp_modules, 0, 16);
}

}  // namespace plansight::estimator
