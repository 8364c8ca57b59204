// LayerNorm (Ba, Kiros & Hinton 2016, §3), CUDA. Forward and the dinp part of backward use one
// warp per row (32 lanes stride over C, shuffle reductions), two passes for the variance as the
// CPU twin. Backward: with xhat = (x - mean) rstd and g = dout * weight,
//   dx = rstd (g - mean(g) - xhat mean(g xhat))
// (the chain rule through the row mean and variance, derived for batch statistics in Ioffe &
// Szegedy 2015, §3; the same algebra over the feature axis). dweight = Σ_rows xhat dout and
// dbias = Σ_rows dout are reduced by a column kernel (32 columns x 8 row slices per block), which
// is deterministic, unlike atomics per row. One template over the element type: 16-bit values are
// widened to fp32 on load, statistics and gradients of the parameters stay fp32.
#include "plansight/kernels/cuda/layernorm.h"

#include "common.cuh"
#include "dtype.cuh"
#include "plansight/kernels/layernorm.h"

namespace plansight::kernels::cuda {
namespace {

constexpr int kRowsPerBlock = detail::kBlockSize / 32;  // one warp per row
// Row slices of the column kernel (32 x 32 threads a block): its grid has only C / 32 blocks, so
// more slices keep more loads in flight (matmul.cu's bias gradient says why); fixed-order sums.
constexpr int kColumnSlices = 32;

template <class T>
__global__ void layernorm_forward_kernel(T* out, float* mean, float* rstd, const T* inp, const T* weight,
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
__global__ void layernorm_backward_input_kernel(T* dinp, const T* dout, const T* inp, const T* weight,
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
    layernorm_backward_params_kernel(float* dweight, float* dbias, const T* dout, const T* inp, const float* mean,
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

unsigned int row_blocks(int N) { return static_cast<unsigned int>((N + kRowsPerBlock - 1) / kRowsPerBlock); }

template <class T>
Status forward(T* out, float* mean, float* rstd, const T* inp, const T* weight, const T* bias, int N, int C,
               cudaStream_t stream) {
  if (N <= 0 || C <= 0) return {};  // nothing to do; a grid of 0 blocks is a launch error
  layernorm_forward_kernel<T><<<row_blocks(N), detail::kBlockSize, 0, stream>>>(out, mean, rstd, inp, weight,
                                                                                bias, N, C, cpu::kLayerNormEps);
  return detail::launch_status("layernorm_forward_kernel");
}

template <class T>
Status backward(T* dinp, float* dweight, float* dbias, const T* dout, const T* inp, const T* weight,
                const float* mean, const float* rstd, int N, int C, cudaStream_t stream) {
  if (N <= 0 || C <= 0) return {};
  layernorm_backward_input_kernel<T><<<row_blocks(N), detail::kBlockSize, 0, stream>>>(dinp, dout, inp, weight,
                                                                                       mean, rstd, N, C);
  Status status = detail::launch_status("layernorm_backward_input_kernel");
  if (!status) return status;
  const dim3 block(32, kColumnSlices);
  const unsigned int blocks = static_cast<unsigned int>((C + 31) / 32);
  layernorm_backward_params_kernel<T><<<blocks, block, 0, stream>>>(dweight, dbias, dout, inp, mean, rstd, N, C);
  return detail::launch_status("layernorm_backward_params_kernel");
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
