// Fully connected layer, CUDA: three cuBLASLt GEMMs (gemm.h) as in the CPU twin's three
// cblas_sgemm calls, the forward bias (and optionally GeLU) in the GEMM's epilogue, and the bias
// gradient as a column reduction over dout in a fixed order (deterministic, unlike atomics): by
// column strips with 16-byte loads (vec.cuh) when OC and dout allow, else 32 columns x 32 row
// slices per block.
#include "plansight/kernels/cuda/matmul.h"

#include "common.cuh"
#include "dtype.cuh"
#include "gemm.h"
#include "vec.cuh"
#include "library_status.h"
#include "plansight/kernels/cuda/gelu.h"

namespace plansight::kernels::cuda {
namespace {

// Row slices of the bias-gradient kernel: a block is 32 columns x 32 slices (1,024 threads). Its
// grid has OC / 32 blocks only (24 for GPT-2's 768 channels on a 132-SM H100), so the loads in
// flight, and with them the kernel's bandwidth, grow with the slices: 8 left it near 0.3 ms a
// call over B x T = 8,192 rows, tens of calls a step. The slices meet in a fixed order, so the
// sum is the same every run.
constexpr int kColumnSlices = 32;

template <class E>
__global__ void __launch_bounds__(32 * kColumnSlices) bias_grad_scalar_kernel(float* dbias, const E* dout, int N, int OC) {
  __shared__ float part[kColumnSlices][32];
  const int o = blockIdx.x * 32 + threadIdx.x;
  float sum = 0.0f;
  if (o < OC) {
    for (int n = threadIdx.y; n < N; n += kColumnSlices) sum += detail::to_float(dout[static_cast<std::size_t>(n) * OC + o]);
  }
  part[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && o < OC) {
    for (int k = 1; k < kColumnSlices; ++k) sum += part[k][threadIdx.x];
    dbias[o] += sum;
  }
}

// dbias by column strips (vec.cuh): thread t reads pack t % kPacks of the block's strip in rows
// t / kPacks, + kSlices, ... with 16-byte loads. OC % kVecWidth == 0, dout 16-byte aligned.
template <class E, int kPacks>
__global__ void __launch_bounds__(detail::kStripThreads) bias_grad_kernel(float* dbias, const E* dout, int N, int OC) {
  constexpr int W = detail::kVecWidth<E>;
  constexpr int kSlices = detail::kStripThreads / kPacks;
  __shared__ float scratch[detail::kStripThreads / 32][kPacks][W];
  const int o = (blockIdx.x * kPacks + threadIdx.x % kPacks) * W;
  float sum[W] = {};
  if (o < OC) {
    // kStripBatch rows' loads are issued before any is summed: more bytes in flight per thread.
    for (int n0 = threadIdx.x / kPacks; n0 < N; n0 += detail::kStripBatch * kSlices) {
      float d[detail::kStripBatch][W];
#pragma unroll
      for (int b = 0; b < detail::kStripBatch; ++b) {
        const int n = n0 + b * kSlices;
        if (n < N) detail::load_pack(d[b], dout + static_cast<std::size_t>(n) * OC + o);
      }
#pragma unroll
      for (int b = 0; b < detail::kStripBatch; ++b) {
        if (n0 + b * kSlices < N) {
#pragma unroll
          for (int j = 0; j < W; ++j) sum[j] += d[b][j];
        }
      }
    }
  }
  detail::strip_sum(sum, scratch);
  // Threads 0..kPacks-1 hold the totals of their own packs (t % kPacks == t).
  if (threadIdx.x < kPacks && o < OC) {
#pragma unroll
    for (int j = 0; j < W; ++j) dbias[o + j] += sum[j];
  }
}

// dbias[o] += Σ_n dout[n, o]; N, OC >= 1.
template <class E>
Status launch_bias_grad(float* dbias, const E* dout, int N, int OC, cudaStream_t stream) {
  if (detail::rows_vectorisable<E>(OC, dout)) {
    constexpr int kStripColumns = detail::kStripPacks * detail::kVecWidth<E>;
    const auto blocks = static_cast<unsigned int>((OC + kStripColumns - 1) / kStripColumns);
    bias_grad_kernel<E, detail::kStripPacks><<<blocks, detail::kStripThreads, 0, stream>>>(dbias, dout, N, OC);
    return detail::launch_status("bias_grad_kernel");
  }
  const dim3 block(32, kColumnSlices);
  bias_grad_scalar_kernel<E><<<static_cast<unsigned int>((OC + 31) / 32), block, 0, stream>>>(dbias, dout, N, OC);
  return detail::launch_status("bias_grad_scalar_kernel");
}

template <class E>
detail::Gemm forward_gemm(E* out, const E* inp, const E* weight, const E* bias, int N, int C, int OC) {
  // out[N,OC] = inp[N,C] · weight[OC,C]^T
  detail::Gemm g;
  g.what = "matmul_forward";
  g.ab_type = g.c_type = detail::TypeInfo<E>::kDType;
  g.m = N, g.n = OC, g.k = C;
  g.a = inp, g.lda = C;
  g.b = weight, g.ldb = C, g.trans_b = true;
  g.c = out, g.ldc = OC;
  g.bias = bias;
  return g;
}

template <class E>
Status forward(E* out, const E* inp, const E* weight, const E* bias, int N, int C, int OC, Blas& blas,
               cudaStream_t stream) {
  return detail::gemm(blas, forward_gemm(out, inp, weight, bias, N, C, OC), stream);
}

template <class E>
Status gelu_forward(E* out, E* pre_gelu, const E* inp, const E* weight, const E* bias, int N, int C, int OC,
                    Blas& blas, cudaStream_t stream) {
  if (bias == nullptr) return detail::invalid_argument("matmul_gelu_forward: bias is null; the fused GeLU needs a bias");
  if (!detail::gelu_epilogue_supports(OC)) {
    if (Status s = forward(pre_gelu, inp, weight, bias, N, C, OC, blas, stream); !s) return s;
    return cuda::gelu_forward(out, pre_gelu, static_cast<std::size_t>(N) * OC, stream);
  }
  detail::Gemm g = forward_gemm(out, inp, weight, bias, N, C, OC);
  g.what = "matmul_gelu_forward";
  g.gelu_pre = pre_gelu;
  Status fused = detail::gemm(blas, g, stream);
  // No cuBLASLt algorithm with this epilogue for these types and alignments: the unfused pair
  // computes the same (nothing was launched).
  if (fused.cuda_error() == static_cast<int>(CUBLAS_STATUS_NOT_SUPPORTED)) {
    if (Status s = forward(pre_gelu, inp, weight, bias, N, C, OC, blas, stream); !s) return s;
    return cuda::gelu_forward(out, pre_gelu, static_cast<std::size_t>(N) * OC, stream);
  }
  return fused;
}

template <class E>
Status backward(E* dinp, float* dweight, float* dbias, const E* dout, const E* inp, const E* weight, int N, int C,
                int OC, Blas& blas, cudaStream_t stream, Gradient dinp_mode) {
  const DType type = detail::TypeInfo<E>::kDType;
  if (dinp != nullptr) {
    // dinp[N,C] += dout[N,OC] · weight[OC,C] (beta 0: overwritten)
    detail::Gemm g;
    g.what = "matmul_backward dinp";
    g.ab_type = g.c_type = type;
    g.m = N, g.n = C, g.k = OC;
    g.a = dout, g.lda = OC;
    g.b = weight, g.ldb = C;
    g.c = dinp, g.ldc = C;
    g.beta = dinp_mode == Gradient::overwrite ? 0.0f : 1.0f;
    if (Status s = detail::gemm(blas, g, stream); !s) return s;
  }
  if (dweight != nullptr) {
    // dweight[OC,C] += dout[N,OC]^T · inp[N,C], accumulated into fp32.
    detail::Gemm g;
    g.what = "matmul_backward dweight";
    g.ab_type = type;
    g.c_type = DType::fp32;
    g.m = OC, g.n = C, g.k = N;
    g.a = dout, g.lda = OC, g.trans_a = true;
    g.b = inp, g.ldb = C;
    g.c = dweight, g.ldc = C;
    g.beta = 1.0f;
    if (Status s = detail::gemm(blas, g, stream); !s) return s;
  }
  if (dbias == nullptr || OC <= 0 || N <= 0) return {};  // a grid of 0 blocks is a launch error
  return launch_bias_grad(dbias, dout, N, OC, stream);
}

}  // namespace

Status matmul_forward(float* out, const float* inp, const float* w, const float* b, int N, int C, int OC, Blas& blas,
                      cudaStream_t s) {
  return forward(out, inp, w, b, N, C, OC, blas, s);
}
Status matmul_forward(bfloat16* out, const bfloat16* inp, const bfloat16* w, const bfloat16* b, int N, int C, int OC, Blas& blas,
                      cudaStream_t s) {
  return forward(out, inp, w, b, N, C, OC, blas, s);
}
Status matmul_forward(float16* out, const float16* inp, const float16* w, const float16* b, int N, int C, int OC, Blas& blas,
                      cudaStream_t s) {
  return forward(out, inp, w, b, N, C, OC, blas, s);
}

Status matmul_gelu_forward(float* out, float* pre, const float* inp, const float* w, const float* b, int N, int C,
                           int OC, Blas& blas, cudaStream_t s) {
  return gelu_forward(out, pre, inp, w, b, N, C, OC, blas, s);
}
Status matmul_gelu_forward(bfloat16* out, bfloat16* pre, const bfloat16* inp, const bfloat16* w, const bfloat16* b, int N, int C, int OC,
                           Blas& blas, cudaStream_t s) {
  return gelu_forward(out, pre, inp, w, b, N, C, OC, blas, s);
}
Status matmul_gelu_forward(float16* out, float16* pre, const float16* inp, const float16* w, const float16* b, int N, int C, int OC,
                           Blas& blas, cudaStream_t s) {
  return gelu_forward(out, pre, inp, w, b, N, C, OC, blas, s);
}

Status matmul_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w, int N,
                       int C, int OC, Blas& blas, cudaStream_t s, Gradient mode) {
  return backward(dinp, dw, db, dout, inp, w, N, C, OC, blas, s, mode);
}
Status matmul_backward(bfloat16* dinp, float* dw, float* db, const bfloat16* dout, const bfloat16* inp, const bfloat16* w, int N,
                       int C, int OC, Blas& blas, cudaStream_t s, Gradient mode) {
  return backward(dinp, dw, db, dout, inp, w, N, C, OC, blas, s, mode);
}
Status matmul_backward(float16* dinp, float* dw, float* db, const float16* dout, const float16* inp, const float16* w, int N,
                       int C, int OC, Blas& blas, cudaStream_t s, Gradient mode) {
  return backward(dinp, dw, db, dout, inp, w, N, C, OC, blas, s, mode);
}

Status bias_backward(float* dbias, const void* dout, int N, int OC, DType type, cudaStream_t stream) {
  if (OC <= 0 || N <= 0) return {};  // nothing to add; a grid of 0 blocks is a launch error
  switch (type) {
    case DType::fp32: return launch_bias_grad(dbias, static_cast<const float*>(dout), N, OC, stream);
    case DType::bf16: return launch_bias_grad(dbias, static_cast<const bfloat16*>(dout), N, OC, stream);
    case DType::fp16: return launch_bias_grad(dbias, static_cast<const float16*>(dout), N, OC, stream);
  }
  return detail::invalid_argument("bias_backward: unknown element type");
}

}  // namespace plansight::kernels::cuda
