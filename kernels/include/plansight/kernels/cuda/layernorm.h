// CUDA twins of plansight/kernels/layernorm.h (Ba, Kiros & Hinton 2016), same parameters plus the
// stream. One warp per row; dweight/dbias are reduced over rows by a separate column kernel, so
// the backward is deterministic (no atomics).
#pragma once

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// Device pointers; eps is plansight::kernels::cpu::kLayerNormEps.
Status layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                         const float* weight, const float* bias, int N, int C, cudaStream_t stream);

// Accumulates dinp [N,C], dweight [C], dbias [C] from dout [N,C] and the saved mean/rstd.
Status layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                          const float* inp, const float* weight, const float* mean,
                          const float* rstd, int N, int C, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
