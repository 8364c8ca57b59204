// CUDA twins of plansight/kernels/attention.h: causal multi-head attention from a packed qkv
// [B,T,3C], as strided-batched cuBLASLt GEMMs over the heads of each sequence (read straight out
// of qkv with leading dimension 3C, no permuted copies, as the CPU twin) and a causal softmax
// kernel. Same parameters as the CPU twins, then the rank's Blas, then the stream. att and
// scratch [B,NH,T,T] have the activations' type; softmax math is fp32.
#pragma once

#include "plansight/kernels/cuda/blas.h"
#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// out = softmax(q k^T / sqrt(hs) + causal mask) v per (b, head); att keeps the probabilities
// (zero above the diagonal). Fails (nothing launched) unless NH > 0 divides C.
Status attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, Blas& blas,
                         cudaStream_t stream);
Status attention_forward(bfloat16* out, bfloat16* att, const bfloat16* qkv, int B, int T, int C, int NH, Blas& blas,
                         cudaStream_t stream);
Status attention_forward(float16* out, float16* att, const float16* qkv, int B, int T, int C, int NH, Blas& blas,
                         cudaStream_t stream);

// Accumulates dqkv [B,T,3C]; scratch [B,NH,T,T] is overwritten (the gradient of att).
Status attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                          int T, int C, int NH, Blas& blas, cudaStream_t stream);
Status attention_backward(bfloat16* dqkv, bfloat16* scratch, const bfloat16* dout, const bfloat16* qkv, const bfloat16* att, int B,
                          int T, int C, int NH, Blas& blas, cudaStream_t stream);
Status attention_backward(float16* dqkv, float16* scratch, const float16* dout, const float16* qkv, const float16* att, int B,
                          int T, int C, int NH, Blas& blas, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
