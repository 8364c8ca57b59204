// Activations of MoE, MLA and MTP layers, generalising Korthikanti et al. 2022 (Table 2) term
// by term, per token of the GPU's sequence shard (e = activation bytes, t = TP, sp = sequence
// parallel):
//  attention (standard): norm input, QKV input (2eh) and the dropout mask (h) on every TP rank
//    (split by t with sp); Q, K, V, attention output split by t; scores as memory.cpp counts them.
//  attention (MLA, DeepSeek-V2 Sec. 2.1.2): the same norm/input terms; the low-rank latents
//    (q_a output and q_a_layernorm output, e*2*q_lora; kv_a output e*(kv_lora + rope) and
//    kv_a_layernorm output e*kv_lora) are computed by the duplicated down projections on every
//    TP rank (Megatron-Core MLA) and not split; Q and K (heads x (nope + rope)), V and the
//    attention output (heads x v_head_dim) are split by t.
//  dense MLP: norm input, MLP input (2eh) and the dropout mask (h); e*f*(3 gated | 2) split by t.
//  MoE MLP (Megatron-Core MoELayer with the all-to-all dispatcher): norm input and the router /
//    dispatcher input (2eh), dropout mask (h), router logits (e*E) and fp32 scores (4E, the
//    top-k softmax/sigmoid runs in fp32); for every routed copy: the permuted input (eh, FC1's
//    input), FC1 output and activation (e*f_e*(3|2)/etp) and FC2 output (eh, kept for the
//    combine's gradient with respect to the routing probabilities); routed copies per local
//    token = top_k x etp (ETP ranks all-gather their experts' tokens) x the assumed imbalance
//    (max/mean tokens per expert, capped by the capacity factor when tokens are dropped);
//    shared experts as a dense MLP split by t.
// Selective recomputation drops the attention scores (Megatron's default "core_attn" module);
// full recomputation keeps only each layer's input, as for dense layers.
#include "moe_memory.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/pipeline_schedule.h"

#include <algorithm>

namespace plansight::estimator {
namespace {

double element_bytes(Precision p) { return p == Precision::fp32 || p == Precision::tf32 ? 4.0 : 2.0; }

}  // namespace

bool needs_layer_kinds(const ModelSpec& m) { return m.moe.enabled() || m.mla.enabled() || m.mtp_modules > 0; }

double routed_copies_per_token(const Plan& plan) {
  const MoeSpec& moe = plan.model.moe;
  return static_cast<double>(moe.top_k) * static_cast<double>(plan.layout.expert_tp()) * moe.effective_imbalance();
}

double layer_activation_bytes_by_kind(const Plan& plan, Recompute recompute, bool moe_layer) {
  const auto& m = plan.model;
  const auto& l = plan.layout;
  const double e = element_bytes(plan.training.precision);
  const double t = static_cast<double>(l.tp);
  const double split = l.sequence_parallel && l.tp > 1 ? t : 1.0;
  const double tokens = static_cast<double>(plan.training.seq_len) / static_cast<double>(l.cp) *
                        static_cast<double>(plan.training.micro_batch);
  const double h = static_cast<double>(m.hidden);
  if (recompute == Recompute::full) return tokens * e * h / split;

  const double mask = m.dropout ? 1.0 : 0.0;
  const double a = static_cast<double>(m.heads);
  const double keys = static_cast<double>(plan.training.seq_len);
  const double gate = m.gated_mlp ? 3.0 : 2.0;

  const Fp8SavedInputs g = fp8_saved_gemm_input_bytes(plan);  // memory.h: fp8 copies of GEMM inputs
  double replicated = e * h + g.input * h + mask * h;  // attention half: the norm's input and output
  double unsplit = 0, sharded = 0;
  if (m.mla.enabled()) {
    const MlaSpec& x = m.mla;
    unsplit = e * (2.0 * static_cast<double>(x.q_lora_rank) + static_cast<double>(x.kv_lora_rank + x.qk_rope_head_dim) +
                   static_cast<double>(x.kv_lora_rank));
    sharded = e * a * (2.0 * static_cast<double>(x.qk_head_dim()) + 2.0 * static_cast<double>(x.v_head_dim));
  } else {
    sharded = e * static_cast<double>(m.q_width() + 2 * m.kv_width()) + g.attention_output * static_cast<double>(m.q_width());
  }
  double scores = 0;
  if (plan.training.attention == AttentionKernel::flash) {
    scores = 4 * a;
  } else if (recompute != Recompute::selective) {
    scores = e * a * keys + (m.dropout ? (1 + e) * a * keys : 0);
  }

  // An MLP of width f: its up output(s) in 16 bits (the activation's input) and its down input,
  // a GEMM input (fp8 under fp8 training).
  auto mlp = [&](double f) { return e * f * (gate - 1) + g.input * f; };
  double routed = 0;
  if (moe_layer) {
    // The norm's output stays in 16 bits: the router's weight gradient needs it.
    replicated += 2 * e * h + mask * h;
    const MoeSpec& moe = m.moe;
    replicated += (e + 4) * static_cast<double>(moe.experts);
    const double etp = static_cast<double>(l.expert_tp());
    // Each routed copy: the experts' dispatched input (a GEMM input) and their output, and the FFN.
    const double per_copy = (e + g.input) * h + mlp(static_cast<double>(moe.expert_ffn_hidden) / etp);
    routed = routed_copies_per_token(plan) * per_copy;
    sharded += static_cast<double>(moe.shared_experts) * mlp(static_cast<double>(moe.effective_shared_ffn_hidden()));
  } else {
    replicated += e * h + g.input * h + mask * h;  // MLP half: the norm's input and output
    sharded += mlp(static_cast<double>(m.ffn_hidden));
  }
  return tokens * ((replicated + routed) / split + unsplit + (sharded + scores) / t);
}

// The experts' FFN gradients (activation output and input, (gate + 1) f_e / etp per routed
// copy) for the busiest GPU's dispatched tokens, the MoE counterpart of memory.cpp's MLP term.
double moe_backward_working_bytes(const Plan& plan) {
  const auto& m = plan.model;
  const auto& l = plan.layout;
  if (!m.moe.enabled()) return 0;
  const double e = element_bytes(plan.training.precision);
  const double split = l.sequence_parallel && l.tp > 1 ? static_cast<double>(l.tp) : 1.0;
  const double tokens = static_cast<double>(plan.training.seq_len) / static_cast<double>(l.cp) *
                        static_cast<double>(plan.training.micro_batch) / split;
  const double f = static_cast<double>(m.moe.expert_ffn_hidden) / static_cast<double>(l.expert_tp());
  return tokens * routed_copies_per_token(plan) * e * ((m.gated_mlp ? 2.0 : 1.0) + 1.0) * f;
}

std::vector<std::int64_t> chunk_moe_layers(const Plan& plan, const std::vector<std::int64_t>& chunk_layers) {
  std::vector<std::int64_t> out;
  out.reserve(chunk_layers.size());
  std::int64_t first = 0;
  for (const std::int64_t n : chunk_layers) {
    // DualPipe's second copy starts again at layer 0 (chunk_layers()).
    if (two_pipelines(plan.layout.schedule) && static_cast<std::int64_t>(out.size()) == plan.layout.pp) first = 0;
    out.push_back(plan.model.moe_layers_in(first, n));
    first += n;
  }
  return out;
}

// Megatron-Core's all-to-all dispatcher permutes the local tokens into a send buffer and
// receives the routed copies; the combine does the reverse. Both hold tokens x copies x h
// elements for the busiest GPU; one MoE layer's worth is alive at a time.
double expert_all_to_all_buffer_bytes(const Plan& plan) {
  const auto& l = plan.layout;
  if (!plan.model.moe.enabled() || (l.ep == 1 && l.expert_tp() == 1)) return 0;
  const double e = element_bytes(plan.training.precision);
  const double split = l.sequence_parallel && l.tp > 1 ? static_cast<double>(l.tp) : 1.0;
  const double tokens = static_cast<double>(plan.training.seq_len) / static_cast<double>(l.cp) *
                        static_cast<double>(plan.training.micro_batch) / split;
  return 2 * tokens * routed_copies_per_token(plan) * e * static_cast<double>(plan.model.hidden);
}

}  // namespace plansight::estimator
