// AdamW (Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization", Algorithm 2) with
// Adam's bias correction (Kingma & Ba 2015, Algorithm 1), over one flat fp32 parameter buffer.
#pragma once

#include <cstddef>

namespace plansight::kernels {

struct AdamWSettings {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled: params -= lr * weight_decay * params
};

}  // namespace plansight::kernels

namespace plansight::kernels::cpu {

// One step, step = 1 for the first update. Updates params, m (first moment) and v (second
// moment) in place from grads; all four hold n floats. m and v start at zero.
void adamw_update(float* params, float* m, float* v, const float* grads, std::size_t n,
                  const AdamWSettings& settings, int step);

}  // namespace plansight::kernels::cpu
