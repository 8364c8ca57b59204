// AdamW, CUDA; element-wise, grid-stride. Per element (Loshchilov & Hutter 2019, Algorithm 2,
// schedule multiplier 1; bias correction from Kingma & Ba 2015, Algorithm 1), as the CPU twin:
//   m = b1 m + (1-b1) g ;  v = b2 v + (1-b2) g^2 ;  p -= lr (m^ / (sqrt(v^) + eps) + wd p)
// The corrections 1 - b^t are computed on the host in double, rounded to float, as on the CPU.
// The mixed-precision variant runs the same update on the fp32 master weights and stores the
// rounded compute copy in the same pass (no second kernel over the parameters).
#include "plansight/kernels/cuda/adamw.h"

#include <cmath>

#include "common.cuh"
#include "dtype.cuh"

namespace plansight::kernels::cuda {
namespace {

struct Coefficients {
  float lr, b1, b2, eps, weight_decay, correction1, correction2, grad_multiplier;
};

Coefficients coefficients_of(const AdamWSettings& settings, int step, float grad_multiplier) {
  return {settings.learning_rate,
          settings.beta1,
          settings.beta2,
          settings.eps,
          settings.weight_decay,
          1.0f - static_cast<float>(std::pow(double{settings.beta1}, step)),
          1.0f - static_cast<float>(std::pow(double{settings.beta2}, step)),
          grad_multiplier};
}

__device__ inline float adamw_element(float p, float& m, float& v, float g, const Coefficients& k) {
  const float m_new = k.b1 * m + (1.0f - k.b1) * g;
  const float v_new = k.b2 * v + (1.0f - k.b2) * g * g;
  m = m_new;
  v = v_new;
  const float m_hat = m_new / k.correction1;
  const float v_hat = v_new / k.correction2;
  return p - k.lr * (m_hat / (sqrtf(v_hat) + k.eps) + k.weight_decay * p);
}

__global__ void adamw_kernel(float* params, float* m, float* v, const float* grads, std::size_t n, Coefficients k) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float mi = m[i], vi = v[i];
    params[i] = adamw_element(params[i], mi, vi, grads[i], k);
    m[i] = mi;
    v[i] = vi;
  }
}

template <class T>
__global__ void adamw_master_kernel(float* master, T* params, float* m, float* v, const float* grads,
                                    std::size_t n, Coefficients k, const float* skip_when_set) {
  if (skip_when_set != nullptr && *skip_when_set != 0.0f) return;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float mi = m[i], vi = v[i];
    const float p = adamw_element(master[i], mi, vi, grads[i] * k.grad_multiplier, k);
    master[i] = p;
    params[i] = detail::from_float<T>(p);
    m[i] = mi;
    v[i] = vi;
  }
}

template <class T>
Status master_update(float* master, T* params, float* m, float* v, const float* grads, std::size_t n,
                     const AdamWSettings& settings, int step, float grad_multiplier, cudaStream_t stream,
                     const float* skip_when_set = nullptr) {
  adamw_master_kernel<T><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(
      master, params, m, v, grads, n, coefficients_of(settings, step, grad_multiplier), skip_when_set);
  return detail::launch_status("adamw_master_kernel");
}

}  // namespace

Status adamw_update(float* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, cudaStream_t stream) {
  adamw_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(params, m, v, grads, n,
                                                                       coefficients_of(settings, step, 1.0f));
  return detail::launch_status("adamw_kernel");
}

Status adamw_update(float* master, float* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, cudaStream_t s) {
  return master_update(master, params, m, v, grads, n, settings, step, grad_multiplier, s);
}
Status adamw_update(float* master, bfloat16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, cudaStream_t s) {
  return master_update(master, params, m, v, grads, n, settings, step, grad_multiplier, s);
}
Status adamw_update(float* master, float16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, cudaStream_t s) {
  return master_update(master, params, m, v, grads, n, settings, step, grad_multiplier, s);
}
Status adamw_update(float* master, bfloat16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, const float* skip_when_set,
                    cudaStream_t s) {
  return master_update(master, params, m, v, grads, n, settings, step, grad_multiplier, s, skip_when_set);
}
Status adamw_update(float* master, float16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, const float* skip_when_set,
                    cudaStream_t s) {
  return master_update(master, params, m, v, grads, n, settings, step, grad_multiplier, s, skip_when_set);
}

}  // namespace plansight::kernels::cuda
