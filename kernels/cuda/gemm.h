// One row-major GEMM (optionally strided-batched) through cuBLASLt, with fp32 accumulation and
// the bias / bias+GeLU epilogues: C = alpha op(A) op(B) + beta C, all matrices row-major as the
// CPU twins store them. The twins (matmul.cu, attention.cu) describe their GEMMs with this and
// never touch cuBLASLt themselves. Plain C++.
#pragma once

#include <cstdint>

#include "plansight/kernels/cuda/blas.h"
#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda::detail {

struct Gemm {
  const char* what = "gemm";  // names the GEMM in error messages
  bool trans_a = false;       // op(A) = A^T: A is stored [k, m] instead of [m, k]
  bool trans_b = false;       // op(B) = B^T: B is stored [n, k] instead of [k, n]
  int m = 0, n = 0, k = 0;    // C [m, n], op(A) [m, k], op(B) [k, n]
  int batch = 1;
  DType ab_type = DType::fp32;  // A and B (and bias, gelu_pre)
  DType c_type = DType::fp32;   // C; fp32 C with 16-bit A/B accumulates weight gradients in fp32
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  int lda = 0;
  std::int64_t stride_a = 0;  // elements between batches
  const void* b = nullptr;
  int ldb = 0;
  std::int64_t stride_b = 0;
  void* c = nullptr;
  int ldc = 0;
  std::int64_t stride_c = 0;
  const void* bias = nullptr;  // [n], added to every row of C (epilogue BIAS)
  void* gelu_pre = nullptr;    // with bias: C = gelu(op(A) op(B) + bias), gelu_pre = the argument
                               // (epilogue GELU_AUX_BIAS; row-major [m, n] with ld ldc)
};

// Runs `g` on `stream`. Errors (invalid shapes, no cuBLASLt algorithm, a failed call) name the
// GEMM and the cuBLASLt call.
Status gemm(Blas& blas, const Gemm& g, cudaStream_t stream);

// Whether the fused bias+GeLU epilogue accepts an output of `ldc` elements per row: cuBLASLt
// requires the auxiliary (pre-GeLU) matrix's leading dimension to be a multiple of 8
// (cublasLt.h, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD).
constexpr bool gelu_epilogue_supports(int ldc) { return ldc % 8 == 0; }

}  // namespace plansight::kernels::cuda::detail
