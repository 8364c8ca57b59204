// LayerNorm (Ba, Kiros & Hinton 2016, §3), CUDA. Forward and the dinp part of backward use one
// warp per row, two passes for the variance as the CPU twin. Backward: with xhat = (x - mean) rstd
// and g = dout * weight,
//   dx = rstd (g - mean(g) - xhat mean(g xhat))
// (the chain rule through the row mean and variance, derived for batch statistics in Ioffe &
// Szegedy 2015, §3; the same algebra over the feature axis). dweight = Σ_rows xhat dout and
// dbias = Σ_rows dout are reduced by column-strip blocks in a fixed order, deterministic unlike
// atomics per row. Rows whose length is a multiple of 16 bytes and that fit in registers
// (vec.cuh) are read once with 16-byte loads and kept in registers, as llm.c's
// layernorm_forward_kernel6 / layernorm_backward_kernel10 (dev/cuda/layernorm_*.cu); other shapes
// take the scalar kernels (32 lanes striding over C). 16-bit values are widened to fp32 on load;
// statistics and the parameters' gradients stay fp32.
#include "plansight/kernels/cuda/layernorm.h"

#include "common.cuh"
#include "dtype.cuh"
#include "vec.cuh"
#include "plansight/kernels/layernorm.h"

namespace plansight::kernels::cuda {
namespace {

constexpr int kRowsPerBlock = detail::kBlockSize / 32;  // one warp per row
// Row slices of the column kernel (32 x 32 threads a block): its grid has only C / 32 blocks, so
// more slices keep more loads in flight (matmul.cu's bias gradient says why); fixed-order sums.
constexpr int kColumnSlices = 32;

template <class T>
__global__ void layernorm_forward_scalar_kernel(T* out, float* mean, float* rstd, const T* inp, const T* weight,
                                         const T* bias, int N, int C, float eps) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  if (row >= N) return;  // whole warps leave together; no block-wide barrier follows
  const T* x = inp + static_cast<std::size_t>(row) * C;
  T* y = out + static_cast<std::size_t>(row) * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) sum += detail::to_float(x[c]);
  const float m = detail::warp_sum(sum) / C;
  float squares = 0.0f;
  for (int c = lane; c < C; c += 32) {
    const float d = detail::to_float(x[c]) - m;
    squares += d * d;
  }
  const float s = 1.0f / sqrtf(detail::warp_sum(squares) / C + eps);
  for (int c = lane; c < C; c += 32) {
    const float xhat = (detail::to_float(x[c]) - m) * s;
    y[c] = detail::from_float<T>(xhat * detail::to_float(weight[c]) + detail::to_float(bias[c]));
  }
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

template <class T>
__global__ void layernorm_backward_input_scalar_kernel(T* dinp, const T* dout, const T* inp, const T* weight,
                                                const float* mean, const float* rstd, int N, int C) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  if (row >= N) return;
  const std::size_t offset = static_cast<std::size_t>(row) * C;
  const T* x = inp + offset;
  const T* dy = dout + offset;
  T* dx = dinp + offset;
  const float m = mean[row];
  const float s = rstd[row];
  float g_sum = 0.0f;
  float g_xhat_sum = 0.0f;
  for (int c = lane; c < C; c += 32) {
    const float xhat = (detail::to_float(x[c]) - m) * s;
    const float g = detail::to_float(dy[c]) * detail::to_float(weight[c]);
    g_sum += g;
    g_xhat_sum += g * xhat;
  }
  const float g_mean = detail::warp_sum(g_sum) / C;
  const float g_xhat_mean = detail::warp_sum(g_xhat_sum) / C;
  for (int c = lane; c < C; c += 32) {
    const float xhat = (detail::to_float(x[c]) - m) * s;
    const float g = detail::to_float(dy[c]) * detail::to_float(weight[c]);
    dx[c] = detail::from_float<T>(detail::to_float(dx[c]) + s * (g - g_mean - xhat * g_xhat_mean));
  }
}

// blockDim (32, kColumnSlices): threadIdx.x picks the column (coalesced), threadIdx.y a slice of
// rows; the slices' partial sums meet in shared memory.
template <class T>
__global__ void __launch_bounds__(32 * kColumnSlices)
    layernorm_backward_params_scalar_kernel(float* dweight, float* dbias, const T* dout, const T* inp, const float* mean,
                                     const float* rstd, int N, int C) {
  __shared__ float weight_part[kColumnSlices][32];
  __shared__ float bias_part[kColumnSlices][32];
  const int c = blockIdx.x * 32 + threadIdx.x;
  float dw = 0.0f;
  float db = 0.0f;
  if (c < C) {
    for (int n = threadIdx.y; n < N; n += kColumnSlices) {
      const std::size_t i = static_cast<std::size_t>(n) * C + c;
      const float xhat = (detail::to_float(inp[i]) - mean[n]) * rstd[n];
      const float dy = detail::to_float(dout[i]);
      dw += xhat * dy;
      db += dy;
    }
  }
  weight_part[threadIdx.y][threadIdx.x] = dw;
  bias_part[threadIdx.y][threadIdx.x] = db;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    for (int k = 1; k < kColumnSlices; ++k) {
      dw += weight_part[k][threadIdx.x];
      db += bias_part[k][threadIdx.x];
    }
    dweight[c] += dw;
    dbias[c] += db;
  }
}

// One warp per row, the row in registers: lane l holds packs l, l + 32, ... (kChunks of them) of
// kVecWidth elements, so x is read once, with 16-byte loads. C % kVecWidth == 0, 16-byte aligned
// rows, C <= 32 kVecWidth kChunks (layernorm_forward picks kChunks).
template <class T, int kChunks>
__global__ void layernorm_forward_kernel(T* out, float* mean, float* rstd, const T* inp, const T* weight,
                                         const T* bias, int N, int C, float eps) {
  constexpr int W = detail::kVecWidth<T>;
  using detail::to_float;
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  if (row >= N) return;  // whole warps leave together; no block-wide barrier follows
  const std::size_t offset = static_cast<std::size_t>(row) * C;
  detail::Pack<T, W> x[kChunks] = {};
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (k * 32 + lane) * W;
    if (c < C) {
      x[k] = detail::read_pack<W>(inp + offset + c);
#pragma unroll
      for (int i = 0; i < W; ++i) sum += to_float(x[k].v[i]);
    }
  }
  const float m = detail::warp_sum(sum) / C;
  float squares = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    if ((k * 32 + lane) * W < C) {
#pragma unroll
      for (int i = 0; i < W; ++i) {
        const float d = to_float(x[k].v[i]) - m;
        squares += d * d;
      }
    }
  }
  const float s = 1.0f / sqrtf(detail::warp_sum(squares) / C + eps);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (k * 32 + lane) * W;
    if (c < C) {
      float w[W], b[W], y[W];
      detail::load_pack(w, weight + c);
      detail::load_pack(b, bias + c);
#pragma unroll
      for (int i = 0; i < W; ++i) y[i] = (to_float(x[k].v[i]) - m) * s * w[i] + b[i];
      detail::store_pack(out + offset + c, y);
    }
  }
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

// The dinp part of backward, one warp per row with x and dout of the row in registers (read once,
// 16-byte loads); dinp is read and written once. Same preconditions as layernorm_forward_kernel.
template <class T, int kChunks>
__global__ void layernorm_backward_input_kernel(T* dinp, const T* dout, const T* inp, const T* weight,
                                                const float* mean, const float* rstd, int N, int C) {
  constexpr int W = detail::kVecWidth<T>;
  using detail::to_float;
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  if (row >= N) return;
  const std::size_t offset = static_cast<std::size_t>(row) * C;
  const float m = mean[row];
  const float s = rstd[row];
  detail::Pack<T, W> x[kChunks] = {};
  detail::Pack<T, W> dy[kChunks] = {};
  float g_sum = 0.0f;
  float g_xhat_sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (k * 32 + lane) * W;
    if (c < C) {
      x[k] = detail::read_pack<W>(inp + offset + c);
      dy[k] = detail::read_pack<W>(dout + offset + c);
      float w[W];
      detail::load_pack(w, weight + c);
#pragma unroll
      for (int i = 0; i < W; ++i) {
        const float xhat = (to_float(x[k].v[i]) - m) * s;
        const float g = to_float(dy[k].v[i]) * w[i];
        g_sum += g;
        g_xhat_sum += g * xhat;
      }
    }
  }
  const float g_mean = detail::warp_sum(g_sum) / C;
  const float g_xhat_mean = detail::warp_sum(g_xhat_sum) / C;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (k * 32 + lane) * W;
    if (c < C) {
      float dx[W], w[W];
      detail::load_pack(dx, dinp + offset + c);
      detail::load_pack(w, weight + c);
#pragma unroll
      for (int i = 0; i < W; ++i) {
        const float xhat = (to_float(x[k].v[i]) - m) * s;
        const float g = to_float(dy[k].v[i]) * w[i];
        dx[i] += s * (g - g_mean - xhat * g_xhat_mean);
      }
      detail::store_pack(dinp + offset + c, dx);
    }
  }
}

// dweight and dbias by column strips (vec.cuh): block b owns packs b kPacks.. of the columns;
// thread t reads pack t % kPacks of rows t / kPacks, + kSlices, ... with 16-byte loads,
// then strip_sum adds the slices in a fixed order. C % kVecWidth == 0, 16-byte aligned rows.
template <class T, int kPacks>
__global__ void __launch_bounds__(detail::kStripThreads)
    layernorm_backward_params_kernel(float* dweight, float* dbias, const T* dout, const T* inp, const float* mean,
                                     const float* rstd, int N, int C) {
  constexpr int W = detail::kVecWidth<T>;
  constexpr int kSlices = detail::kStripThreads / kPacks;
  __shared__ float scratch[detail::kStripThreads / 32][kPacks][W];
  const int c = (blockIdx.x * kPacks + threadIdx.x % kPacks) * W;
  float dw[W] = {};
  float db[W] = {};
  if (c < C) {
    // kStripBatch rows' loads are issued before any is summed: more bytes in flight per thread.
    for (int n0 = threadIdx.x / kPacks; n0 < N; n0 += detail::kStripBatch * kSlices) {
      detail::Pack<T, W> x[detail::kStripBatch], dy[detail::kStripBatch];
      float m[detail::kStripBatch], s[detail::kStripBatch];
#pragma unroll
      for (int b = 0; b < detail::kStripBatch; ++b) {
        const int n = n0 + b * kSlices;
        if (n < N) {
          const std::size_t i = static_cast<std::size_t>(n) * C + c;
          x[b] = detail::read_pack<W>(inp + i);
          dy[b] = detail::read_pack<W>(dout + i);
          m[b] = mean[n];
          s[b] = rstd[n];
        }
      }
#pragma unroll
      for (int b = 0; b < detail::kStripBatch; ++b) {
        if (n0 + b * kSlices < N) {
#pragma unroll
          for (int j = 0; j < W; ++j) {
            const float d = detail::to_float(dy[b].v[j]);
            dw[j] += (detail::to_float(x[b].v[j]) - m[b]) * s[b] * d;
            db[j] += d;
          }
        }
      }
    }
  }
  detail::strip_sum(dw, scratch);
  detail::strip_sum(db, scratch);
  // Threads 0..kPacks-1 hold the totals of their own packs (t % kPacks == t).
  if (threadIdx.x < kPacks && c < C) {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      dweight[c + j] += dw[j];
      dbias[c + j] += db[j];
    }
  }
}

unsigned int row_blocks(int N) { return static_cast<unsigned int>((N + kRowsPerBlock - 1) / kRowsPerBlock); }

template <class T>
Status forward(T* out, float* mean, float* rstd, const T* inp, const T* weight, const T* bias, int N, int C,
               cudaStream_t stream) {
  if (N <= 0 || C <= 0) return {};  // nothing to do; a grid of 0 blocks is a launch error
  const int chunks = detail::chunks_for<T>(C);
  if (chunks <= detail::kMaxChunks && detail::rows_vectorisable<T>(C, out, inp, weight, bias)) {
    return detail::with_chunks(chunks, [&](auto k) {
      layernorm_forward_kernel<T, decltype(k)::value><<<row_blocks(N), detail::kBlockSize, 0, stream>>>(
          out, mean, rstd, inp, weight, bias, N, C, cpu::kLayerNormEps);
      return detail::launch_status("layernorm_forward_kernel");
    });
  }
  layernorm_forward_scalar_kernel<T><<<row_blocks(N), detail::kBlockSize, 0, stream>>>(out, mean, rstd, inp, weight,
                                                                                       bias, N, C, cpu::kLayerNormEps);
  return detail::launch_status("layernorm_forward_scalar_kernel");
}

template <class T>
Status backward_input(T* dinp, const T* dout, const T* inp, const T* weight, const float* mean, const float* rstd,
                      int N, int C, cudaStream_t stream) {
  const int chunks = detail::chunks_for<T>(C);
  if (chunks <= detail::kMaxChunks && detail::rows_vectorisable<T>(C, dinp, dout, inp, weight)) {
    return detail::with_chunks(chunks, [&](auto k) {
      layernorm_backward_input_kernel<T, decltype(k)::value><<<row_blocks(N), detail::kBlockSize, 0, stream>>>(
          dinp, dout, inp, weight, mean, rstd, N, C);
      return detail::launch_status("layernorm_backward_input_kernel");
    });
  }
  layernorm_backward_input_scalar_kernel<T><<<row_blocks(N), detail::kBlockSize, 0, stream>>>(dinp, dout, inp, weight,
                                                                                              mean, rstd, N, C);
  return detail::launch_status("layernorm_backward_input_scalar_kernel");
}

template <class T>
Status backward_params(float* dweight, float* dbias, const T* dout, const T* inp, const float* mean, const float* rstd,
                       int N, int C, cudaStream_t stream) {
  if (detail::rows_vectorisable<T>(C, dout, inp)) {
    constexpr int kStripColumns = detail::kStripPacks * detail::kVecWidth<T>;
    const auto blocks = static_cast<unsigned int>((C + kStripColumns - 1) / kStripColumns);
    layernorm_backward_params_kernel<T, detail::kStripPacks><<<blocks, detail::kStripThreads, 0, stream>>>(
        dweight, dbias, dout, inp, mean, rstd, N, C);
    return detail::launch_status("layernorm_backward_params_kernel");
  }
  const dim3 block(32, kColumnSlices);
  const auto blocks = static_cast<unsigned int>((C + 31) / 32);
  layernorm_backward_params_scalar_kernel<T><<<blocks, block, 0, stream>>>(dweight, dbias, dout, inp, mean, rstd, N, C);
  return detail::launch_status("layernorm_backward_params_scalar_kernel");
}

template <class T>
Status backward(T* dinp, float* dweight, float* dbias, const T* dout, const T* inp, const T* weight,
                const float* mean, const float* rstd, int N, int C, cudaStream_t stream) {
  if (N <= 0 || C <= 0) return {};
  if (Status s = backward_input(dinp, dout, inp, weight, mean, rstd, N, C, stream); !s) return s;
  return backward_params(dweight, dbias, dout, inp, mean, rstd, N, C, stream);
}

}  // namespace

Status layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                         const float* bias, int N, int C, cudaStream_t s) {
  return forward(out, mean, rstd, inp, weight, bias, N, C, s);
}
Status layernorm_forward(bfloat16* out, float* mean, float* rstd, const bfloat16* inp, const bfloat16* weight,
                         const bfloat16* bias, int N, int C, cudaStream_t s) {
  return forward(out, mean, rstd, inp, weight, bias, N, C, s);
}
Status layernorm_forward(float16* out, float* mean, float* rstd, const float16* inp, const float16* weight,
                         const float16* bias, int N, int C, cudaStream_t s) {
  return forward(out, mean, rstd, inp, weight, bias, N, C, s);
}

Status layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                          const float* weight, const float* mean, const float* rstd, int N, int C,
                          cudaStream_t s) {
  return backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, s);
}
Status layernorm_backward(bfloat16* dinp, float* dweight, float* dbias, const bfloat16* dout, const bfloat16* inp,
                          const bfloat16* weight, const float* mean, const float* rstd, int N, int C,
                          cudaStream_t s) {
  return backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, s);
}
Status layernorm_backward(float16* dinp, float* dweight, float* dbias, const float16* dout, const float16* inp,
                          const float16* weight, const float* mean, const float* rstd, int N, int C,
                          cudaStream_t s) {
  return backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, s);
}

}  // namespace plansight::kernels::cuda
