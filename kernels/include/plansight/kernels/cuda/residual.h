// CUDA twins of plansight/kernels/residual.h (He et al. 2016): out = inp1 + inp2, same parameters
// plus the stream, for fp32, bf16 and fp16 (sum in fp32, one rounding). Element-wise, grid-stride.
#pragma once

#include <cstddef>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

Status residual_forward(float* out, const float* inp1, const float* inp2, std::size_t n, cudaStream_t stream);
Status residual_forward(bfloat16* out, const bfloat16* inp1, const bfloat16* inp2, std::size_t n, cudaStream_t stream);
Status residual_forward(float16* out, const float16* inp1, const float16* inp2, std::size_t n, cudaStream_t stream);

// Accumulates dinp1 += dout and dinp2 += dout. Neither may alias dout (dout is read once per
// element; the CPU twin, reading it twice, would add an updated dout to dinp2).
Status residual_backward(float* dinp1, float* dinp2, const float* dout, std::size_t n, cudaStream_t stream);
Status residual_backward(bfloat16* dinp1, bfloat16* dinp2, const bfloat16* dout, std::size_t n, cudaStream_t stream);
Status residual_backward(float16* dinp1, float16* dinp2, const float16* dout, std::size_t n, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
