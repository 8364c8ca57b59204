// One GPT-2 decoder layer on one TP rank (Radford et al. 2019): x + Attn(LN1(x)), then
// + MLP(LN2(.)), with Megatron's tensor parallelism (Shoeybi et al. 2019, Sec. 3, Fig. 3):
// QKV and fc1 column-parallel, proj and fc2 row-parallel, so each sub-block has one all-reduce
// in the forward (after the row-parallel GEMM, the "g" operator) and one in the backward (of the
// input gradient of the column-parallel GEMM, the "f" operator).
#pragma once

#include <vector>

#include "param_unit.h"

namespace plansight::probe {

// Indices of a layer's tensors in its unit (-1: the model has no such bias).
struct LayerIndex {
  int ln1_w = -1, ln1_b = -1, qkv_w = -1, qkv_b = -1, proj_w = -1, proj_b = -1;
  int ln2_w = -1, ln2_b = -1, fc_w = -1, fc_b = -1, fc2_w = -1, fc2_b = -1;
};

// The tensors of global layer `layer` (GPT-2 init: residual projections scaled by 1/sqrt(2L),
// Radford et al. 2019 Sec. 2.3), and where each sits.
std::vector<TensorDesc> layer_tensors(const Dims& d, int layer, int layers, LayerIndex& index);

// Activations one layer keeps for its backward, for one micro-batch. What is allocated depends
// on recomputation (Korthikanti et al. 2022): none keeps all; selective drops the attention
// probabilities (recomputed from qkv, Sec. 4.2); full keeps only the layer's output (the next
// layer's input) and recomputes the rest.
struct LayerActs {
  Buf ln1, mean1, rstd1, qkv, att, atty, x2, ln2, mean2, rstd2, fch, fchg;  // mean/rstd fp32, the rest compute type
  Buf out;  // the layer's output: the next layer's input
  void allocate_internals(Backend& backend, const Dims& d);
  void free_internals();
};

class TransformerBlock {
 public:
  TransformerBlock(RankContext& ctx, int layer, int stage);
  ParamUnit& unit() { return unit_; }

  // out = layer(x). `phase` is forward or recompute (a recompute redoes the TP all-reduces,
  // as Megatron's checkpointed layers do).
  void forward(const void* x, LayerActs& a, estimator::Phase phase, int micro_batch);
  // After the forward of a micro-batch: drops what the recomputation mode does not keep.
  void trim(LayerActs& a) const;
  // Before the backward: recomputes what trim() dropped (ZeRO-3 weights must be acquired).
  void restore(const void* x, LayerActs& a, int micro_batch);
  // dx = d(layer)/dx . dout (overwritten); parameter gradients accumulate into the unit.
  void backward(const void* x, const void* dout, void* dx, LayerActs& a, int micro_batch);

 private:
  RankContext& ctx_;
  int layer_;
  int stage_;
  LayerIndex ix_;
  ParamUnit unit_;
};

}  // namespace plansight::probe
