// AdamW, CPU reference. Per element (Loshchilov & Hutter 2019, Algorithm 2, with schedule
// multiplier 1; bias correction from Kingma & Ba 2015, Algorithm 1):
//   m = b1 m + (1-b1) g ;  v = b2 v + (1-b2) g^2 ;  m^ = m/(1-b1^t) ;  v^ = v/(1-b2^t)
//   p = p - lr (m^ / (sqrt(v^) + eps) + wd p)          (same as PyTorch's torch.optim.AdamW)
#include "plansight/kernels/adamw.h"

#include <cmath>

namespace plansight::kernels::cpu {

void adamw_update(float* params, float* m, float* v, const float* grads, std::size_t n,
                  const AdamWSettings& settings, int step) {
  const float b1 = settings.beta1;
  const float b2 = settings.beta2;
  const float correction1 = 1.0f - static_cast<float>(std::pow(double{b1}, step));
  const float correction2 = 1.0f - static_cast<float>(std::pow(double{b2}, step));
  const float lr = settings.learning_rate;
  for (std::size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    const float m_new = b1 * m[i] + (1.0f - b1) * g;
    const float v_new = b2 * v[i] + (1.0f - b2) * g * g;
    m[i] = m_new;
    v[i] = v_new;
    const float m_hat = m_new / correction1;
    const float v_hat = v_new / correction2;
    params[i] -= lr * (m_hat / (std::sqrt(v_hat) + settings.eps) + settings.weight_decay * params[i]);
  }
}

}  // namespace plansight::kernels::cpu
