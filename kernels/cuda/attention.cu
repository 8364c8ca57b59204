// Causal multi-head attention, CUDA. Per sequence b, the NH heads are one strided batch: head h
// of q, k, v starts hs elements after head h-1 inside each row of qkv (leading dimension 3C), and
// its output goes to columns h*hs.. of out (leading dimension C), so the GEMMs read and write the
// packed layouts directly, as the CPU twin's per-head cblas_sgemm calls do. Scores are scaled by
// 1/sqrt(hs) in the GEMM's alpha (Vaswani et al. 2017, eq. 1). The causal softmax and its
// backward (Jacobian diag(p) - p p^T: dscore = p (datt - <p, datt>)) run one warp per row in fp32;
// when T is a multiple of 16 bytes and a row fits in registers (vec.cuh), the backward reads the
// row's causal part once with 16-byte loads and keeps it in registers (llm.c vectorises its
// softmax_autoregressive_backward_kernel, dev/cuda/attention_backward.cu, the same way).
#include "plansight/kernels/cuda/attention.h"

#include <cmath>
#include <string>

#include "common.cuh"
#include "dtype.cuh"
#include "gemm.h"
#include "library_status.h"
#include "vec.cuh"

namespace plansight::kernels::cuda {
namespace {

constexpr int kRowsPerBlock = detail::kBlockSize / 32;  // one warp per row

// att rows are (b, h, t): row t keeps columns 0..t, the rest becomes 0.
template <class E>
__global__ void causal_softmax_kernel(E* att, int rows, int T) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;  // whole warps leave together
  const int t = row % T;
  E* r = att + static_cast<std::size_t>(row) * T;
  float row_max = -INFINITY;
  for (int s = lane; s <= t; s += 32) row_max = fmaxf(row_max, detail::to_float(r[s]));
  row_max = detail::warp_max(row_max);
  float sum = 0.0f;
  for (int s = lane; s <= t; s += 32) sum += expf(detail::to_float(r[s]) - row_max);
  const float inv_sum = 1.0f / detail::warp_sum(sum);
  for (int s = lane; s < T; s += 32) {
    r[s] = detail::from_float<E>(s <= t ? expf(detail::to_float(r[s]) - row_max) * inv_sum : 0.0f);
  }
}

// In place: g (the gradient of att on entry) becomes the gradient of the scores.
template <class E>
__global__ void causal_softmax_backward_scalar_kernel(E* g, const E* att, int rows, int T) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int t = row % T;
  const std::size_t offset = static_cast<std::size_t>(row) * T;
  const E* p = att + offset;
  E* d = g + offset;
  float dot = 0.0f;
  for (int s = lane; s <= t; s += 32) dot += detail::to_float(p[s]) * detail::to_float(d[s]);
  dot = detail::warp_sum(dot);
  for (int s = lane; s < T; s += 32) {
    d[s] = detail::from_float<E>(s <= t ? detail::to_float(p[s]) * (detail::to_float(d[s]) - dot) : 0.0f);
  }
}

// In place, as causal_softmax_backward_scalar_kernel, one warp per row, lane l holding packs l,
// l + 32, ... of the row's columns 0..t of att and g (packs wholly past t are neither read nor
// kept; they are written as zeros). The loads are predicated, so all are in flight at once.
// T % kVecWidth == 0, g and att 16-byte aligned, T <= 32 kVecWidth kChunks.
template <class E, int kChunks>
__global__ void causal_softmax_backward_kernel(E* g, const E* att, int rows, int T) {
  constexpr int W = detail::kVecWidth<E>;
  using detail::to_float;
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int t = row % T;
  const std::size_t offset = static_cast<std::size_t>(row) * T;
  detail::Pack<E, W> p[kChunks] = {};
  detail::Pack<E, W> d[kChunks] = {};
  float dot = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int s0 = (k * 32 + lane) * W;
    if (s0 <= t) {
      p[k] = detail::read_pack<W>(att + offset + s0);
      d[k] = detail::read_pack<W>(g + offset + s0);
#pragma unroll
      for (int i = 0; i < W; ++i) {
        if (s0 + i <= t) dot += to_float(p[k].v[i]) * to_float(d[k].v[i]);
      }
    }
  }
  dot = detail::warp_sum(dot);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int s0 = (k * 32 + lane) * W;
    if (s0 < T) {
      float out[W];
#pragma unroll
      for (int i = 0; i < W; ++i) {
        out[i] = s0 + i <= t ? to_float(p[k].v[i]) * (to_float(d[k].v[i]) - dot) : 0.0f;
      }
      detail::store_pack(g + offset + s0, out);
    }
  }
}

Status check_heads(int C, int NH) {
  if (NH > 0 && C % NH == 0) return {};
  return detail::invalid_argument("attention: NH = " + std::to_string(NH) + " must be positive and divide C = " +
                                  std::to_string(C));
}

unsigned int row_blocks(int rows) { return static_cast<unsigned int>((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

template <class E>
Status causal_softmax(E* att, int rows, int T, cudaStream_t stream) {
  // Scalar on purpose: on an H200 (bf16, 98,304 rows of T = 1,024) a 16-byte, row-in-registers
  // form ran 131-144 us against this kernel's 129 us, so only the backward is vectorised.
  causal_softmax_kernel<E><<<row_blocks(rows), detail::kBlockSize, 0, stream>>>(att, rows, T);
  return detail::launch_status("causal_softmax_kernel");
}

template <class E>
Status causal_softmax_backward(E* g, const E* att, int rows, int T, cudaStream_t stream) {
  const int chunks = detail::chunks_for<E>(T);
  if (chunks <= detail::kMaxChunks && detail::rows_vectorisable<E>(T, g, att)) {
    return detail::with_chunks(chunks, [&](auto k) {
      causal_softmax_backward_kernel<E, decltype(k)::value><<<row_blocks(rows), detail::kBlockSize, 0, stream>>>(
          g, att, rows, T);
      return detail::launch_status("causal_softmax_backward_kernel");
    });
  }
  causal_softmax_backward_scalar_kernel<E><<<row_blocks(rows), detail::kBlockSize, 0, stream>>>(g, att, rows, T);
  return detail::launch_status("causal_softmax_backward_scalar_kernel");
}

// A GEMM over the NH heads of one sequence; strides in elements.
template <class E>
detail::Gemm head_gemm(const char* what, int m, int n, int k, int NH) {
  detail::Gemm g;
  g.what = what;
  g.ab_type = g.c_type = detail::TypeInfo<E>::kDType;
  g.m = m, g.n = n, g.k = k;
  g.batch = NH;
  return g;
}

template <class E>
Status forward(E* out, E* att, const E* qkv, int B, int T, int C, int NH, Blas& blas, cudaStream_t stream) {
  if (Status s = check_heads(C, NH); !s) return s;
  if (B <= 0 || T <= 0) return {};  // nothing to do; a grid of 0 blocks is a launch error
  const int hs = C / NH, ld_qkv = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const std::int64_t block = static_cast<std::int64_t>(T) * T;
  for (int b = 0; b < B; ++b) {
    const E* q = qkv + static_cast<std::size_t>(b) * T * ld_qkv;
    E* att_b = att + static_cast<std::size_t>(b) * NH * block;
    // scores[T,T] = scale * q[T,hs] · k[T,hs]^T
    detail::Gemm scores = head_gemm<E>("attention_forward scores", T, T, hs, NH);
    scores.alpha = scale;
    scores.a = q, scores.lda = ld_qkv, scores.stride_a = hs;
    scores.b = q + C, scores.ldb = ld_qkv, scores.stride_b = hs, scores.trans_b = true;
    scores.c = att_b, scores.ldc = T, scores.stride_c = block;
    if (Status s = detail::gemm(blas, scores, stream); !s) return s;
  }
  const int rows = B * NH * T;
  if (Status s = causal_softmax(att, rows, T, stream); !s) return s;
  for (int b = 0; b < B; ++b) {
    const E* v = qkv + static_cast<std::size_t>(b) * T * ld_qkv + 2 * C;
    // out_h[T,hs] = att[T,T] · v[T,hs], into columns h*hs.. of out [T,C]
    detail::Gemm values = head_gemm<E>("attention_forward values", T, hs, T, NH);
    values.a = att + static_cast<std::size_t>(b) * NH * block, values.lda = T, values.stride_a = block;
    values.b = v, values.ldb = ld_qkv, values.stride_b = hs;
    values.c = out + static_cast<std::size_t>(b) * T * C, values.ldc = C, values.stride_c = hs;
    if (Status s = detail::gemm(blas, values, stream); !s) return s;
  }
  return {};
}

template <class E>
Status backward(E* dqkv, E* scratch, const E* dout, const E* qkv, const E* att, int B, int T, int C, int NH,
                Blas& blas, cudaStream_t stream) {
  if (Status s = check_heads(C, NH); !s) return s;
  if (B <= 0 || T <= 0) return {};  // nothing to do; a grid of 0 blocks is a launch error
  const int hs = C / NH, ld_qkv = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const std::int64_t block = static_cast<std::int64_t>(T) * T;
  for (int b = 0; b < B; ++b) {
    const std::size_t qkv_offset = static_cast<std::size_t>(b) * T * ld_qkv;
    const E* dout_b = dout + static_cast<std::size_t>(b) * T * C;
    const E* att_b = att + static_cast<std::size_t>(b) * NH * block;
    E* da_b = scratch + static_cast<std::size_t>(b) * NH * block;
    // datt[T,T] = dout_h[T,hs] · v[T,hs]^T
    detail::Gemm datt = head_gemm<E>("attention_backward datt", T, T, hs, NH);
    datt.a = dout_b, datt.lda = C, datt.stride_a = hs;
    datt.b = qkv + qkv_offset + 2 * C, datt.ldb = ld_qkv, datt.stride_b = hs, datt.trans_b = true;
    datt.c = da_b, datt.ldc = T, datt.stride_c = block;
    if (Status s = detail::gemm(blas, datt, stream); !s) return s;
    // dv[T,hs] += att^T · dout_h
    detail::Gemm dv = head_gemm<E>("attention_backward dv", T, hs, T, NH);
    dv.a = att_b, dv.lda = T, dv.stride_a = block, dv.trans_a = true;
    dv.b = dout_b, dv.ldb = C, dv.stride_b = hs;
    dv.c = dqkv + qkv_offset + 2 * C, dv.ldc = ld_qkv, dv.stride_c = hs;
    dv.beta = 1.0f;
    if (Status s = detail::gemm(blas, dv, stream); !s) return s;
  }
  const int rows = B * NH * T;
  if (Status s = causal_softmax_backward(scratch, att, rows, T, stream); !s) return s;
  for (int b = 0; b < B; ++b) {
    const std::size_t qkv_offset = static_cast<std::size_t>(b) * T * ld_qkv;
    const E* da_b = scratch + static_cast<std::size_t>(b) * NH * block;
    // scores = scale * q k^T:  dq += scale * dscore · k ; dk += scale * dscore^T · q
    detail::Gemm dq = head_gemm<E>("attention_backward dq", T, hs, T, NH);
    dq.alpha = scale, dq.beta = 1.0f;
    dq.a = da_b, dq.lda = T, dq.stride_a = block;
    dq.b = qkv + qkv_offset + C, dq.ldb = ld_qkv, dq.stride_b = hs;
    dq.c = dqkv + qkv_offset, dq.ldc = ld_qkv, dq.stride_c = hs;
    if (Status s = detail::gemm(blas, dq, stream); !s) return s;
    detail::Gemm dk = head_gemm<E>("attention_backward dk", T, hs, T, NH);
    dk.alpha = scale, dk.beta = 1.0f;
    dk.a = da_b, dk.lda = T, dk.stride_a = block, dk.trans_a = true;
    dk.b = qkv + qkv_offset, dk.ldb = ld_qkv, dk.stride_b = hs;
    dk.c = dqkv + qkv_offset + C, dk.ldc = ld_qkv, dk.stride_c = hs;
    if (Status s = detail::gemm(blas, dk, stream); !s) return s;
  }
  return {};
}

}  // namespace

Status attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, Blas& blas,
                         cudaStream_t s) {
  return forward(out, att, qkv, B, T, C, NH, blas, s);
}
Status attention_forward(bfloat16* out, bfloat16* att, const bfloat16* qkv, int B, int T, int C, int NH, Blas& blas,
                         cudaStream_t s) {
  return forward(out, att, qkv, B, T, C, NH, blas, s);
}
Status attention_forward(float16* out, float16* att, const float16* qkv, int B, int T, int C, int NH, Blas& blas,
                         cudaStream_t s) {
  return forward(out, att, qkv, B, T, C, NH, blas, s);
}

Status attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                          int T, int C, int NH, Blas& blas, cudaStream_t s) {
  return backward(dqkv, scratch, dout, qkv, att, B, T, C, NH, blas, s);
}
Status attention_backward(bfloat16* dqkv, bfloat16* scratch, const bfloat16* dout, const bfloat16* qkv, const bfloat16* att, int B, int T,
                          int C, int NH, Blas& blas, cudaStream_t s) {
  return backward(dqkv, scratch, dout, qkv, att, B, T, C, NH, blas, s);
}
Status attention_backward(float16* dqkv, float16* scratch, const float16* dout, const float16* qkv, const float16* att, int B, int T,
                          int C, int NH, Blas& blas, cudaStream_t s) {
  return backward(dqkv, scratch, dout, qkv, att, B, T, C, NH, blas, s);
}

}  // namespace plansight::kernels::cuda
