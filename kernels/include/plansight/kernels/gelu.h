// GeLU with the tanh approximation used by GPT-2 (Hendrycks & Gimpel 2016, "Gaussian Error
// Linear Units", §2): gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#pragma once

#include <cstddef>

#include "plansight/kernels/gradient_mode.h"

namespace plansight::kernels::cpu {

void gelu_forward(float* out, const float* inp, std::size_t n);

// Accumulates dinp += gelu'(inp) * dout (= with Gradient::overwrite, not reading dinp).
void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n,
                   Gradient mode = Gradient::accumulate);

}  // namespace plansight::kernels::cpu
