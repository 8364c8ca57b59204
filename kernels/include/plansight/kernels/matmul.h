// Fully connected layer as one GEMM: out[N,OC] = inp[N,C] · weight[OC,C]^T + bias[OC].
// The weight is stored [OC,C] (PyTorch nn.Linear layout), so the GEMM reads it transposed.
// CPU: cblas_sgemm from OpenBLAS, fp32 in and out.
#pragma once

#include "plansight/kernels/gradient_mode.h"

namespace plansight::kernels::cpu {

// bias may be null (no bias).
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N,
                    int C, int OC);

// Accumulates dinp [N,C] += dout·weight, dweight [OC,C] += dout^T·inp, dbias [OC] += Σ_n dout.
// dinp may be null (the input needs no gradient); dbias may be null (no bias). With
// Gradient::overwrite, dinp = dout·weight instead (its old contents are not read).
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC, Gradient dinp_mode = Gradient::accumulate);

// The input-gradient half of matmul_backward: dinp [N,C] += dout·weight (= with
// Gradient::overwrite). (Calibration times the two halves apart, as the time model costs them:
// probe/src/calibration.cpp.)
void matmul_backward_input(float* dinp, const float* dout, const float* weight, int N, int C, int OC,
                           Gradient mode = Gradient::accumulate);

}  // namespace plansight::kernels::cpu
