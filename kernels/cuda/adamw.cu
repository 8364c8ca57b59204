// AdamW, CUDA; element-wise, grid-stride. Per element (Loshchilov & Hutter 2019, Algorithm 2,
// schedule multiplier 1; bias correction from Kingma & Ba 2015, Algorithm 1), as the CPU twin:
//   m = b1 m + (1-b1) g ;  v = b2 v + (1-b2) g^2 ;  p -= lr (m^ / (sqrt(v^) + eps) + wd p)
// The corrections 1 - b^t are computed on the host in double, rounded to float, as on the CPU.
#include "plansight/kernels/cuda/adamw.h"

#include <cmath>

#include "common.cuh"

namespace plansight::kernels::cuda {
namespace {

__global__ void adamw_kernel(float* params, float* m, float* v, const float* grads, std::size_t n,
                             float lr, float b1, float b2, float eps, float weight_decay,
                             float correction1, float correction2) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float g = grads[i];
    const float m_new = b1 * m[i] + (1.0f - b1) * g;
    const float v_new = b2 * v[i] + (1.0f - b2) * g * g;
    m[i] = m_new;
    v[i] = v_new;
    const float m_hat = m_new / correction1;
    const float v_hat = v_new / correction2;
    params[i] -= lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * params[i]);
  }
}

}  // namespace

Status adamw_update(float* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, cudaStream_t stream) {
  const float correction1 = 1.0f - static_cast<float>(std::pow(double{settings.beta1}, step));
  const float correction2 = 1.0f - static_cast<float>(std::pow(double{settings.beta2}, step));
  adamw_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(
      params, m, v, grads, n, settings.learning_rate, settings.beta1, settings.beta2,
      settings.eps, settings.weight_decay, correction1, correction2);
  return detail::launch_status("adamw_kernel");
}

}  // namespace plansight::kernels::cuda
