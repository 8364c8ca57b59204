// CUDA twins of plansight/kernels/gelu.h: GeLU, tanh approximation (Hendrycks & Gimpel 2016, §2),
// same parameters plus the stream, for fp32, bf16 and fp16 (fp32 math inside, one rounding on
// store). Element-wise, grid-stride over n.
#pragma once

#include <cstddef>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"
#include "plansight/kernels/gradient_mode.h"

namespace plansight::kernels::cuda {

Status gelu_forward(float* out, const float* inp, std::size_t n, cudaStream_t stream);
Status gelu_forward(bfloat16* out, const bfloat16* inp, std::size_t n, cudaStream_t stream);
Status gelu_forward(float16* out, const float16* inp, std::size_t n, cudaStream_t stream);

// Accumulates dinp += gelu'(inp) * dout (= with Gradient::overwrite, not reading dinp).
Status gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n, cudaStream_t stream,
                     Gradient mode = Gradient::accumulate);
Status gelu_backward(bfloat16* dinp, const bfloat16* inp, const bfloat16* dout, std::size_t n, cudaStream_t stream,
                     Gradient mode = Gradient::accumulate);
Status gelu_backward(float16* dinp, const float16* inp, const float16* dout, std::size_t n, cudaStream_t stream,
                     Gradient mode = Gradient::accumulate);

}  // namespace plansight::kernels::cuda
