// Residual connection (He et al. 2016): out = inp1 + inp2, element-wise.
#pragma once

#include <cstddef>

namespace plansight::kernels::cpu {

void residual_forward(float* out, const float* inp1, const float* inp2, std::size_t n);

// Accumulates dinp1 += dout and dinp2 += dout.
void residual_backward(float* dinp1, float* dinp2, const float* dout, std::size_t n);

}  // namespace plansight::kernels::cpu
