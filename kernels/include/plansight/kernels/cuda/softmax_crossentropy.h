// CUDA twins of plansight/kernels/softmax_crossentropy.h: row softmax over the vocabulary fused
// with cross-entropy, same parameters plus the stream. Forward: one block per row (max, then sum
// of exp, as the CPU twin); backward: element-wise over [N,V].
#pragma once

#include <cstdint>

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// probs = softmax(logits) row-wise, losses[n] = -log probs[n, targets[n]] (0 where ignored).
Status softmax_crossentropy_forward(float* losses, float* probs, const float* logits,
                                    const std::int32_t* targets, int N, int V,
                                    std::int32_t ignore_index, cudaStream_t stream);

// Accumulates dlogits [N,V] += (probs - onehot(target)) * dlosses[n]; ignored rows get nothing.
Status softmax_crossentropy_backward(float* dlogits, const float* dlosses, const float* probs,
                                     const std::int32_t* targets, int N, int V,
                                     std::int32_t ignore_index, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
