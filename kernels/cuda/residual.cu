// Residual connection (He et al. 2016), CUDA; element-wise, grid-stride over 16-byte packs
// (vec.cuh) when every pointer is 16-byte aligned, the last n % width elements one per thread.
// The backward adds dout
// to both inputs' gradients (accumulating, like every backward here). One template over the
// element type; sums are formed in fp32 and rounded once.
#include "plansight/kernels/cuda/residual.h"

#include "common.cuh"
#include "dtype.cuh"
#include "vec.cuh"

namespace plansight::kernels::cuda {
namespace {

// Packs 0..n / kWidth - 1 grid-stride, then the tail n - n % kWidth.. by the first threads.
template <class T, int kWidth>
__global__ void residual_forward_kernel(T* out, const T* inp1, const T* inp2, std::size_t n) {
  const std::size_t packs = n / kWidth;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (std::size_t j = first; j < packs; j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float a[kWidth], b[kWidth];
    detail::load_pack(a, inp1 + j * kWidth);
    detail::load_pack(b, inp2 + j * kWidth);
#pragma unroll
    for (int i = 0; i < kWidth; ++i) a[i] += b[i];
    detail::store_pack(out + j * kWidth, a);
  }
  const std::size_t i = packs * kWidth + first;
  if (i < n) out[i] = detail::from_float<T>(detail::to_float(inp1[i]) + detail::to_float(inp2[i]));
}

template <class T, int kWidth>
__global__ void residual_backward_kernel(T* dinp1, T* dinp2, const T* dout, std::size_t n) {
  const std::size_t packs = n / kWidth;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (std::size_t j = first; j < packs; j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float d[kWidth], a[kWidth], b[kWidth];
    detail::load_pack(d, dout + j * kWidth);
    detail::load_pack(a, dinp1 + j * kWidth);
    detail::load_pack(b, dinp2 + j * kWidth);
#pragma unroll
    for (int i = 0; i < kWidth; ++i) {
      a[i] += d[i];
      b[i] += d[i];
    }
    detail::store_pack(dinp1 + j * kWidth, a);
    detail::store_pack(dinp2 + j * kWidth, b);
  }
  const std::size_t i = packs * kWidth + first;
  if (i < n) {
    const float d = detail::to_float(dout[i]);
    dinp1[i] = detail::from_float<T>(detail::to_float(dinp1[i]) + d);
    dinp2[i] = detail::from_float<T>(detail::to_float(dinp2[i]) + d);
  }
}

template <class T>
Status forward(T* out, const T* inp1, const T* inp2, std::size_t n, cudaStream_t stream) {
  if (detail::all_aligned16(out, inp1, inp2)) {
    constexpr int W = detail::kVecWidth<T>;
    residual_forward_kernel<T, W><<<detail::grid_for(n / W), detail::kBlockSize, 0, stream>>>(out, inp1, inp2, n);
  } else {
    residual_forward_kernel<T, 1><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(out, inp1, inp2, n);
  }
  return detail::launch_status("residual_forward_kernel");
}

template <class T>
Status backward(T* dinp1, T* dinp2, const T* dout, std::size_t n, cudaStream_t stream) {
  if (detail::all_aligned16(dinp1, dinp2, dout)) {
    constexpr int W = detail::kVecWidth<T>;
    residual_backward_kernel<T, W><<<detail::grid_for(n / W), detail::kBlockSize, 0, stream>>>(dinp1, dinp2, dout, n);
  } else {
    residual_backward_kernel<T, 1><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(dinp1, dinp2, dout, n);
  }
  return detail::launch_status("residual_backward_kernel");
}

}  // namespace

Status residual_forward(float* out, const float* a, const float* b, std::size_t n, cudaStream_t s) { return forward(out, a, b, n, s); }
Status residual_forward(bfloat16* out, const bfloat16* a, const bfloat16* b, std::size_t n, cudaStream_t s) { return forward(out, a, b, n, s); }
Status residual_forward(float16* out, const float16* a, const float16* b, std::size_t n, cudaStream_t s) { return forward(out, a, b, n, s); }

Status residual_backward(float* da, float* db, const float* dout, std::size_t n, cudaStream_t s) { return backward(da, db, dout, n, s); }
Status residual_backward(bfloat16* da, bfloat16* db, const bfloat16* dout, std::size_t n, cudaStream_t s) { return backward(da, db, dout, n, s); }
Status residual_backward(float16* da, float16* db, const float16* dout, std::size_t n, cudaStream_t s) { return backward(da, db, dout, n, s); }

}  // namespace plansight::kernels::cuda
