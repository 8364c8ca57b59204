// CUDA twins of plansight/kernels/layernorm.h (Ba, Kiros & Hinton 2016), same parameters plus the
// stream. inp/out/weight/bias/dinp/dout are fp32, bf16 or fp16; the saved mean/rstd and the
// parameter gradients dweight/dbias are fp32 (see dtypes.h). One warp per row; dweight/dbias
// are reduced over rows by a separate column kernel, so the backward is deterministic.
#pragma once

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// Device pointers; eps is plansight::kernels::cpu::kLayerNormEps.
Status layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                         const float* bias, int N, int C, cudaStream_t stream);
Status layernorm_forward(bfloat16* out, float* mean, float* rstd, const bfloat16* inp, const bfloat16* weight,
                         const bfloat16* bias, int N, int C, cudaStream_t stream);
Status layernorm_forward(float16* out, float* mean, float* rstd, const float16* inp, const float16* weight,
                         const float16* bias, int N, int C, cudaStream_t stream);

// Accumulates dinp [N,C], dweight [C], dbias [C] from dout [N,C] and the saved mean/rstd.
// dinp must not alias dout: dweight and dbias are summed from dout after dinp is written.
Status layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                          const float* weight, const float* mean, const float* rstd, int N, int C,
                          cudaStream_t stream);
Status layernorm_backward(bfloat16* dinp, float* dweight, float* dbias, const bfloat16* dout, const bfloat16* inp,
                          const bfloat16* weight, const float* mean, const float* rstd, int N, int C,
                          cudaStream_t stream);
Status layernorm_backward(float16* dinp, float* dweight, float* dbias, const float16* dout, const float16* inp,
                          const float16* weight, const float* mean, const float* rstd, int N, int C,
                          cudaStream_t stream);

}  // namespace plansight::kernels::cuda
