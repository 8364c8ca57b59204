// layout.tp_overlap's rule (Megatron-Core's --tp-comm-overlap), shared by the layer cost
// (layer_costs.cpp) and the per-layer timeline (timeline_layers.cpp): a layer's two blocks, the
// attention block (QKV, output projection) and the MLP block, each run one all-gather and one
// reduce-scatter per pass, half of the pass's TP time, and each block's pair hides behind that
// block's own linear GEMMs of the pass; only the excess is exposed.
#pragma once

#include <algorithm>

#include "plansight/estimator/operator_costs.h"

namespace plansight::estimator {

inline constexpr int kTpBlocks = 2;  // 0: the attention block, 1: the MLP block

// Whether `op` is one of the linear GEMMs its block's TP collectives run under: a matmul outside
// the attention core that is split over TP (MLA's down projections run whole on every rank).
inline bool hides_tp(const OperatorCost& op) { return op.matmul && !op.attention_core && !op.tp_duplicated; }

// The seconds of one block's collectives that its linear GEMMs hide, of a pass whose TP
// collectives take `pass_tp_s` in all.
inline double tp_block_hidden_s(double pass_tp_s, double block_gemm_s) {
  return std::min(pass_tp_s / kTpBlocks, block_gemm_s);
}

}  // namespace plansight::estimator
