// Residual add, CPU reference: element-wise, forward and (accumulating) backward.
#include "plansight/kernels/residual.h"

namespace plansight::kernels::cpu {

void residual_forward(float* out, const float* inp1, const float* inp2, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = inp1[i] + inp2[i];
}

void residual_backward(float* dinp1, float* dinp2, const float* dout, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    dinp1[i] += dout[i];
    dinp2[i] += dout[i];
  }
}

}  // namespace plansight::kernels::cpu
