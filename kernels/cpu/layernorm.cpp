// LayerNorm, CPU reference. Row statistics are accumulated in double so that the reference is
// not the weak side when CUDA twins are compared against it; outputs stay fp32.
#include "plansight/kernels/layernorm.h"

#include <cmath>
#include <cstddef>

namespace plansight::kernels::cpu {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    float* y = out + static_cast<std::size_t>(n) * C;
    double sum = 0.0;
    for (int c = 0; c < C; ++c) sum += x[c];
    const double m = sum / C;
    double squares = 0.0;
    for (int c = 0; c < C; ++c) squares += (x[c] - m) * (x[c] - m);
    const double s = 1.0 / std::sqrt(squares / C + static_cast<double>(kLayerNormEps));
    for (int c = 0; c < C; ++c) {
      const float normalized = static_cast<float>((x[c] - m) * s);
      y[c] = normalized * weight[c] + bias[c];
    }
    mean[n] = static_cast<float>(m);
    rstd[n] = static_cast<float>(s);
  }
}

// With xhat = (x - mean) * rstd and g = dout * weight (the gradient w.r.t. xhat), the
// gradient through the row statistics is (Ba et al. 2016; derived e.g. in Ioffe & Szegedy
// 2015, §3, for batch statistics):  dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd,
                        int N, int C) {
  for (int n = 0; n < N; ++n) {
    const std::size_t offset = static_cast<std::size_t>(n) * C;
    const float* x = inp + offset;
    const float* dy = dout + offset;
    float* dx = dinp + offset;
    const float m = mean[n];
    const float s = rstd[n];
    double g_sum = 0.0;
    double g_xhat_sum = 0.0;
    for (int c = 0; c < C; ++c) {
      const float xhat = (x[c] - m) * s;
      const float g = dy[c] * weight[c];
      g_sum += g;
      g_xhat_sum += static_cast<double>(g) * xhat;
    }
    const float g_mean = static_cast<float>(g_sum / C);
    const float g_xhat_mean = static_cast<float>(g_xhat_sum / C);
    for (int c = 0; c < C; ++c) {
      const float xhat = (x[c] - m) * s;
      const float g = dy[c] * weight[c];
      dbias[c] += dy[c];
      dweight[c] += xhat * dy[c];
      dx[c] += s * (g - g_mean - xhat * g_xhat_mean);
    }
  }
}

}  // namespace plansight::kernels::cpu
