// Memory terms of MoE, MLA and MTP models that memory.cpp adds to its dense model: activation
// bytes of one layer of either kind, per-chunk counts of MoE layers, the expert all-to-all
// buffers. Dense models never reach these functions, so their numbers stay what they were.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// Whether memory.cpp must use the per-kind terms below (MoE layers, MLA or MTP).
bool needs_layer_kinds(const ModelSpec& model);

// Activation bytes one layer stores for one micro-batch on one GPU; `moe_layer` selects the
// MoE MLP (router, dispatched tokens x top_k, expert FFN, combine) over the dense one.
double layer_activation_bytes_by_kind(const Plan& plan, Recompute recompute, bool moe_layer);

// The activation-gradient working set of an MoE layer's backward (the experts' FFN gradients
// for the dispatched tokens), per micro-batch; memory.cpp takes the larger of it and the
// dense layer's working set.
double moe_backward_working_bytes(const Plan& plan);

// MoE layers held by each model chunk (chunk g holds the layers after chunks 0..g-1).
std::vector<std::int64_t> chunk_moe_layers(const Plan& plan, const std::vector<std::int64_t>& chunk_layers);

// Transient dispatch + combine buffers of one MoE layer (the all-to-all's send and receive
// tensors), or 0 without expert parallelism.
double expert_all_to_all_buffer_bytes(const Plan& plan);

// Tokens (copies) the busiest GPU's experts receive per local token of a micro-batch:
// top_k x etp x the effective imbalance.
double routed_copies_per_token(const Plan& plan);

}  // namespace plansight::estimator
