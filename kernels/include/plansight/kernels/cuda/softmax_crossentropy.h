// CUDA twins of plansight/kernels/softmax_crossentropy.h: row softmax over the vocabulary fused
// with cross-entropy, same parameters plus the stream. logits/probs/dlogits are fp32, bf16 or
// fp16; losses and dlosses are fp32 (a mean over tokens needs the range, and a loss scale enters
// through dlosses). Forward: one block per row (max, then sum of exp, as the CPU twin);
// backward: element-wise over [N,V].
#pragma once

#include <cstdint>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// probs = softmax(logits) row-wise, losses[n] = -log probs[n, targets[n]] (0 where ignored).
Status softmax_crossentropy_forward(float* losses, float* probs, const float* logits, const std::int32_t* targets,
                                    int N, int V, std::int32_t ignore_index, cudaStream_t stream);
Status softmax_crossentropy_forward(float* losses, bfloat16* probs, const bfloat16* logits, const std::int32_t* targets,
                                    int N, int V, std::int32_t ignore_index, cudaStream_t stream);
Status softmax_crossentropy_forward(float* losses, float16* probs, const float16* logits, const std::int32_t* targets,
                                    int N, int V, std::int32_t ignore_index, cudaStream_t stream);

// Accumulates dlogits [N,V] += (probs - onehot(target)) * dlosses[n]; ignored rows get nothing.
Status softmax_crossentropy_backward(float* dlogits, const float* dlosses, const float* probs,
                                     const std::int32_t* targets, int N, int V, std::int32_t ignore_index,
                                     cudaStream_t stream);
Status softmax_crossentropy_backward(bfloat16* dlogits, const float* dlosses, const bfloat16* probs,
                                     const std::int32_t* targets, int N, int V, std::int32_t ignore_index,
                                     cudaStream_t stream);
Status softmax_crossentropy_backward(float16* dlogits, const float* dlosses, const float16* probs,
                                     const std::int32_t* targets, int N, int V, std::int32_t ignore_index,
                                     cudaStream_t stream);

}  // namespace plansight::kernels::cuda
