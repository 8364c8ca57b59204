// CUDA twins of plansight/kernels/matmul.h: the fully connected layer out = inp · weight^T + bias
// through cuBLASLt with fp32 accumulation. Same parameters as the CPU twins, then the rank's
// Blas (cuBLASLt handle + workspace), then the stream. Activations and weights are fp32 (strict
// or TF32, per Blas::fp32_math), bf16 or fp16; dweight and dbias are fp32 (see dtypes.h).
#pragma once

#include "plansight/kernels/cuda/blas.h"
#include "plansight/kernels/gradient_mode.h"
#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// out [N,OC] = inp [N,C] · weight [OC,C]^T + bias [OC]; bias may be null. The bias is added in
// cuBLASLt's epilogue (CUBLASLT_EPILOGUE_BIAS), not by a second kernel.
Status matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC,
                      Blas& blas, cudaStream_t stream);
Status matmul_forward(bfloat16* out, const bfloat16* inp, const bfloat16* weight, const bfloat16* bias, int N, int C, int OC,
                      Blas& blas, cudaStream_t stream);
Status matmul_forward(float16* out, const float16* inp, const float16* weight, const float16* bias, int N, int C, int OC,
                      Blas& blas, cudaStream_t stream);

// The MLP's first layer and its GeLU in one GEMM: pre_gelu = inp · weight^T + bias (what
// gelu_backward needs) and out = gelu(pre_gelu), through CUBLASLT_EPILOGUE_GELU_AUX_BIAS. When
// OC is not a multiple of 8 (cuBLASLt's rule for the auxiliary output), or cuBLASLt has no
// algorithm with this epilogue for the types, it runs matmul_forward and gelu_forward instead,
// with the same results. bias must not be null.
Status matmul_gelu_forward(float* out, float* pre_gelu, const float* inp, const float* weight, const float* bias,
                           int N, int C, int OC, Blas& blas, cudaStream_t stream);
Status matmul_gelu_forward(bfloat16* out, bfloat16* pre_gelu, const bfloat16* inp, const bfloat16* weight, const bfloat16* bias, int N,
                           int C, int OC, Blas& blas, cudaStream_t stream);
Status matmul_gelu_forward(float16* out, float16* pre_gelu, const float16* inp, const float16* weight, const float16* bias, int N,
                           int C, int OC, Blas& blas, cudaStream_t stream);

// Accumulates dinp [N,C] += dout·weight, dweight [OC,C] += dout^T·inp (fp32, accumulated by the
// GEMM itself: 16-bit operands, fp32 C, beta = 1) and dbias [OC] += Σ_n dout (fp32, a
// deterministic column reduction). Any of dinp, dweight and dbias may be null (the calibration
// times the input- and weight-gradient GEMMs apart). With Gradient::overwrite, dinp = dout·weight
// (the GEMM's beta 0: its old contents are not read, and need not be zeroed first).
Status matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                       const float* weight, int N, int C, int OC, Blas& blas, cudaStream_t stream,
                       Gradient dinp_mode = Gradient::accumulate);
Status matmul_backward(bfloat16* dinp, float* dweight, float* dbias, const bfloat16* dout, const bfloat16* inp,
                       const bfloat16* weight, int N, int C, int OC, Blas& blas, cudaStream_t stream,
                       Gradient dinp_mode = Gradient::accumulate);
Status matmul_backward(float16* dinp, float* dweight, float* dbias, const float16* dout, const float16* inp,
                       const float16* weight, int N, int C, int OC, Blas& blas, cudaStream_t stream,
                       Gradient dinp_mode = Gradient::accumulate);

// dbias [OC] += sum_n dout [N,OC] alone (fp32, the deterministic column reduction of
// matmul_backward), for a bias added outside a GEMM (the probe's row-parallel biases, added
// after the TP all-reduce). `type` is dout's element type.
Status bias_backward(float* dbias, const void* dout, int N, int OC, DType type, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
