// FLOPs of one training iteration: model FLOPs (no recomputation; the MFU numerator) and
// hardware FLOPs (with recomputation), counting every matrix multiply exactly.
#pragma once

#include <cstdint>

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/model_spec.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// Forward FLOPs per token, split by what recomputation repeats.
struct ForwardFlopsPerToken {
  double layer_dense = 0;      // QKV, attention output, MLP GEMMs of one layer
  double layer_attention = 0;  // QK^T and attention-times-V of one layer
  double lm_head = 0;          // logits GEMM
  // MoE models: one MoE layer's GEMMs for a token (attention, router, shared experts and the
  // top_k routed experts it visits: the active parameters), and one MTP module's beyond its
  // layer and head (the 2h -> h projection).
  double moe_layer_dense = 0;
  double mtp_projection = 0;
};

ForwardFlopsPerToken forward_flops_per_token(const ModelSpec& model, std::int64_t seq_len,
                                             std::int64_t vocab, bool causal_attention);

// FLOPs for `tokens` tokens per iteration at sequence length seq_len.
FlopsEstimate iteration_flops(const ModelSpec& model, std::int64_t seq_len, double tokens,
                              std::int64_t hardware_vocab, Recompute recompute, bool causal_attention);

FlopsEstimate iteration_flops(const Plan& plan, std::int64_t hardware_vocab);

}  // namespace plansight::estimator
