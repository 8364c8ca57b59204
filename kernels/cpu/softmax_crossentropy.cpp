// Softmax + cross-entropy, CPU reference. The softmax subtracts the row maximum before exp
// (exactly equal mathematically, and no overflow); the normaliser is summed in double.
// Backward uses d(-log softmax_y)/dlogit_j = p_j - [j == y].
#include "plansight/kernels/softmax_crossentropy.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace plansight::kernels::cpu {

void softmax_crossentropy_forward(float* losses, float* probs, const float* logits,
                                  const std::int32_t* targets, int N, int V,
                                  std::int32_t ignore_index) {
  for (int n = 0; n < N; ++n) {
    const float* z = logits + static_cast<std::size_t>(n) * V;
    float* p = probs + static_cast<std::size_t>(n) * V;
    const float z_max = *std::max_element(z, z + V);
    double sum = 0.0;
    for (int j = 0; j < V; ++j) {
      p[j] = std::exp(z[j] - z_max);
      sum += p[j];
    }
    const float inv_sum = static_cast<float>(1.0 / sum);
    for (int j = 0; j < V; ++j) p[j] *= inv_sum;
    const std::int32_t y = targets[n];
    // -log p_y = log Σ exp(z - z_max) - (z_y - z_max), which stays finite when p_y underflows.
    losses[n] = (y == ignore_index) ? 0.0f : static_cast<float>(std::log(sum) - (z[y] - z_max));
  }
}

void softmax_crossentropy_backward(float* dlogits, const float* dlosses, const float* probs,
                                   const std::int32_t* targets, int N, int V,
                                   std::int32_t ignore_index) {
  for (int n = 0; n < N; ++n) {
    const std::int32_t y = targets[n];
    if (y == ignore_index) continue;
    const float* p = probs + static_cast<std::size_t>(n) * V;
    float* dz = dlogits + static_cast<std::size_t>(n) * V;
    const float dl = dlosses[n];
    for (int j = 0; j < V; ++j) dz[j] += p[j] * dl;
    dz[y] -= dl;
  }
}

}  // namespace plansight::kernels::cpu
