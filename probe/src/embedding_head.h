// The ends of the model on a TP rank: the vocabulary-parallel word embedding plus learned
// positions (first chunk), and the final LayerNorm, LM head and cross-entropy (last chunk).
// Vocabulary parallelism as Megatron-LM's VocabParallelEmbedding and _VocabParallelCrossEntropy
// (Shoeybi et al. 2019, Sec. 3): each TP rank holds V/tp rows of the word embedding, the
// lookup is all-reduced, and the softmax is formed from all-reduced row maxima and sums, so the
// full logits are never gathered.
#pragma once

#include <cstdint>
#include <vector>

#include "param_unit.h"

namespace plansight::probe {

// The word embedding (shared by the head when tied), the positions, the final norm.
TensorDesc word_embedding_tensor(const Dims& d, const char* name);
TensorDesc position_tensor(const Dims& d);
std::vector<TensorDesc> final_norm_tensors(const Dims& d);

// out [N,C] = wte[tokens] + wpe[0..T). `tokens` in the backend's memory.
void embedding_forward(RankContext& ctx, ParamUnit& wte, ParamUnit& wpe, const std::int32_t* tokens, void* out,
                       int stage, int micro_batch);
// Accumulates into the units' gradients.
void embedding_backward(RankContext& ctx, ParamUnit& wte, ParamUnit& wpe, const std::int32_t* tokens, const void* dout,
                        int stage, int micro_batch);

struct HeadActs {
  Buf lnf, mean, rstd, probs;  // probs [N, V/tp]: this rank's softmax columns
};

// Adds the mean cross-entropy of the micro-batch's N tokens to the backend's loss accumulator.
void head_forward(RankContext& ctx, ParamUnit& norm, ParamUnit& weight, const void* x, const std::int32_t* targets,
                  HeadActs& a, int stage, int micro_batch);
// dx [N,C] (overwritten) for a loss scaled by `loss_scale` per token (1 / tokens of the step).
void head_backward(RankContext& ctx, ParamUnit& norm, ParamUnit& weight, const void* x, const std::int32_t* targets,
                   HeadActs& a, float loss_scale, void* dx, int stage, int micro_batch);

}  // namespace plansight::probe
