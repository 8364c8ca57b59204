// CUDA twins of plansight/kernels/gelu.h: GeLU, tanh approximation (Hendrycks & Gimpel 2016, §2),
// same parameters plus the stream. Element-wise, grid-stride over n.
#pragma once

#include <cstddef>

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

Status gelu_forward(float* out, const float* inp, std::size_t n, cudaStream_t stream);

// Accumulates dinp += gelu'(inp) * dout.
Status gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n,
                     cudaStream_t stream);

}  // namespace plansight::kernels::cuda
