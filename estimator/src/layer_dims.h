// The sizes of one transformer layer on one GPU for one micro-batch (tokens, widths, TP split,
// element bytes), shared by the operator list (operator_costs.cpp) and the communication of
// layer_costs.cpp so that both cost the same shapes.
#pragma once

#include "plansight/estimator/plan.h"

namespace plansight::estimator {

struct LayerDims {
  // T = b * s / cp tokens of b sequences (sq of them per CP rank, skv keys per query); h hidden;
  // q and k the query and key/value widths; f the MLP width; d the head width; t the TP degree;
  // e bytes per activation element; mask 1 with dropout (its 1-byte mask); gate 2 for gated MLPs.
  double T, b, sq, skv, h, q, k, f, heads, d, t, e, mask, gate;
  bool sp, flash, causal;
};

LayerDims layer_dims(const Plan& plan);  // operator_costs.cpp

}  // namespace plansight::estimator
