// CUDA twins of plansight/kernels/residual.h (He et al. 2016): out = inp1 + inp2, same parameters
// plus the stream. Element-wise, grid-stride over n.
#pragma once

#include <cstddef>

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

Status residual_forward(float* out, const float* inp1, const float* inp2, std::size_t n,
                        cudaStream_t stream);

// Accumulates dinp1 += dout and dinp2 += dout.
Status residual_backward(float* dinp1, float* dinp2, const float* dout, std::size_t n,
                         cudaStream_t stream);

}  // namespace plansight::kernels::cuda
