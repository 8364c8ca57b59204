// Token + position embedding, CPU reference. Backward scatters into the embedding gradients
// in (b, t) order, so the result is deterministic; a CUDA twin has to get the same sums
// without racing on repeated tokens.
#include "plansight/kernels/encoder.h"

#include <cstddef>

namespace plansight::kernels::cpu {

void encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe,
                     int B, int T, int C) {
  const std::size_t c_size = C;
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const std::size_t row = static_cast<std::size_t>(b) * T + t;
      float* o = out + row * c_size;
      const float* token_row = wte + static_cast<std::size_t>(tokens[row]) * c_size;
      const float* position_row = wpe + static_cast<std::size_t>(t) * c_size;
      for (int c = 0; c < C; ++c) o[c] = token_row[c] + position_row[c];
    }
  }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens,
                      int B, int T, int C) {
  const std::size_t c_size = C;
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const std::size_t row = static_cast<std::size_t>(b) * T + t;
      const float* d = dout + row * c_size;
      float* token_grad = dwte + static_cast<std::size_t>(tokens[row]) * c_size;
      float* position_grad = dwpe + static_cast<std::size_t>(t) * c_size;
      for (int c = 0; c < C; ++c) {
        token_grad[c] += d[c];
        position_grad[c] += d[c];
      }
    }
  }
}

}  // namespace plansight::kernels::cpu
