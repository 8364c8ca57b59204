// Fully connected layer, CPU backend: three row-major cblas_sgemm calls (forward, input
// gradient, weight gradient) plus a bias loop. OpenBLAS is re-entrant, so rank threads may
// call these at once; its own thread count is set once with set_blas_threads().
#include "plansight/kernels/matmul.h"

#include <cblas.h>

#include <cstddef>

namespace plansight::kernels::cpu {

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N,
                    int C, int OC) {
  // out[N,OC] = inp[N,C] · weight[OC,C]^T
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1.0f, inp, C, weight, C, 0.0f,
              out, OC);
  if (bias == nullptr) return;
  for (int n = 0; n < N; ++n) {
    float* row = out + static_cast<std::size_t>(n) * OC;
    for (int o = 0; o < OC; ++o) row[o] += bias[o];
  }
}

void matmul_backward_input(float* dinp, const float* dout, const float* weight, int N, int C, int OC, Gradient mode) {
  // dinp[N,C] += dout[N,OC] · weight[OC,C]; beta 0 overwrites (BLAS does not read C then).
  const float beta = mode == Gradient::overwrite ? 0.0f : 1.0f;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1.0f, dout, OC, weight, C, beta, dinp, C);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC, Gradient dinp_mode) {
  if (dinp != nullptr) matmul_backward_input(dinp, dout, weight, N, C, OC, dinp_mode);
  // dweight[OC,C] += dout[N,OC]^T · inp[N,C]
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f,
              dweight, C);
  if (dbias == nullptr) return;
  for (int n = 0; n < N; ++n) {
    const float* row = dout + static_cast<std::size_t>(n) * OC;
    for (int o = 0; o < OC; ++o) dbias[o] += row[o];
  }
}

}  // namespace plansight::kernels::cpu
