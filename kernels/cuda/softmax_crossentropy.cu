// Softmax + cross-entropy, CUDA. Forward: one block per row; the row maximum is subtracted before
// exp (exact, and no overflow), the normaliser is a block sum, and the loss is
// log Σ exp(z - max) - (z_y - max), finite even when p_y underflows (as the CPU twin).
// Backward: element-wise over [N,V], d(-log softmax_y)/dz_j = p_j - [j == y], scaled by dlosses;
// rows across blockIdx.y and 16-byte packs of a row across blockIdx.x (vec.cuh), so no element
// needs an index division.
// 16-bit logits are widened to fp32; the loss comes from the fp32 logits, not from rounded probs.
#include "plansight/kernels/cuda/softmax_crossentropy.h"

#include "common.cuh"
#include "dtype.cuh"
#include "vec.cuh"

namespace plansight::kernels::cuda {
namespace {

template <class T>
__global__ void softmax_crossentropy_forward_kernel(float* losses, T* probs, const T* logits,
                                                    const std::int32_t* targets, int V, std::int32_t ignore_index) {
  __shared__ float scratch[32];
  const int row = blockIdx.x;
  const T* z = logits + static_cast<std::size_t>(row) * V;
  T* p = probs + static_cast<std::size_t>(row) * V;
  float local_max = -INFINITY;
  for (int j = threadIdx.x; j < V; j += blockDim.x) local_max = fmaxf(local_max, detail::to_float(z[j]));
  const float z_max = detail::block_max(local_max, scratch);
  float local_sum = 0.0f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) local_sum += expf(detail::to_float(z[j]) - z_max);
  // The target's logit, read before any probability is written: with probs == logits (in place)
  // another thread may overwrite z[y] in the loop below.
  const std::int32_t y = targets[row];
  const float z_y = threadIdx.x == 0 && y != ignore_index ? detail::to_float(z[y]) : 0.0f;
  const float sum = detail::block_sum(local_sum, scratch);
  const float inv_sum = 1.0f / sum;
  // The exponentials are recomputed rather than stored unnormalised, so a 16-bit probs buffer is
  // rounded once (from the normalised value), as the fp32 path's p = e * (1 / sum).
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    p[j] = detail::from_float<T>(expf(detail::to_float(z[j]) - z_max) * inv_sum);
  }
  if (threadIdx.x == 0) losses[row] = (y == ignore_index) ? 0.0f : logf(sum) - (z_y - z_max);
}

// Rows n = blockIdx.y, + gridDim.y, ...; packs of kWidth columns (V % kWidth == 0, rows
// kWidth-aligned) across blockIdx.x. Rows with the ignored target are left as they are.
template <class T, int kWidth>
__global__ void softmax_crossentropy_backward_kernel(T* dlogits, const float* dlosses, const T* probs,
                                                     const std::int32_t* targets, int N, int V,
                                                     std::int32_t ignore_index) {
  const int packs = V / kWidth;
  for (int n = blockIdx.y; n < N; n += gridDim.y) {
    const std::int32_t y = targets[n];
    if (y == ignore_index) continue;
    const float dl = dlosses[n];
    const std::size_t offset = static_cast<std::size_t>(n) * V;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < packs; j += gridDim.x * blockDim.x) {
      const std::size_t i = offset + static_cast<std::size_t>(j) * kWidth;
      float d[kWidth], p[kWidth];
      detail::load_pack(d, dlogits + i);
      detail::load_pack(p, probs + i);
#pragma unroll
      for (int k = 0; k < kWidth; ++k) {
        d[k] += p[k] * dl;
        if (j * kWidth + k == y) d[k] -= dl;
      }
      detail::store_pack(dlogits + i, d);
    }
  }
}

template <class T>
Status forward(float* losses, T* probs, const T* logits, const std::int32_t* targets, int N, int V,
               std::int32_t ignore_index, cudaStream_t stream) {
  if (N <= 0) return {};  // nothing to do; a grid of 0 blocks is a launch error
  softmax_crossentropy_forward_kernel<T><<<static_cast<unsigned int>(N), detail::kBlockSize, 0, stream>>>(
      losses, probs, logits, targets, V, ignore_index);
  return detail::launch_status("softmax_crossentropy_forward_kernel");
}

template <class T>
Status backward(T* dlogits, const float* dlosses, const T* probs, const std::int32_t* targets, int N, int V,
                std::int32_t ignore_index, cudaStream_t stream) {
  if (N <= 0 || V <= 0) return {};  // nothing to do; a grid of 0 blocks is a launch error
  auto launch = [&](auto width) {
    constexpr int W = decltype(width)::value;
    const int packs = V / W;
    // A row's packs across x, rows across y (at most 65,535, the grid's y limit; the kernel
    // strides over the rest).
    const dim3 grid(static_cast<unsigned int>((packs + detail::kBlockSize - 1) / detail::kBlockSize),
                    static_cast<unsigned int>(N < 65535 ? N : 65535));
    softmax_crossentropy_backward_kernel<T, W><<<grid, detail::kBlockSize, 0, stream>>>(dlogits, dlosses, probs,
                                                                                        targets, N, V, ignore_index);
    return detail::launch_status("softmax_crossentropy_backward_kernel");
  };
  if (detail::rows_vectorisable<T>(V, dlogits, probs)) return launch(std::integral_constant<int, detail::kVecWidth<T>>());
  return launch(std::integral_constant<int, 1>());
}

}  // namespace

Status softmax_crossentropy_forward(float* losses, float* probs, const float* logits, const std::int32_t* targets,
                                    int N, int V, std::int32_t ignore_index, cudaStream_t s) {
  return forward(losses, probs, logits, targets, N, V, ignore_index, s);
}
Status softmax_crossentropy_forward(float* losses, bfloat16* probs, const bfloat16* logits, const std::int32_t* targets,
                                    int N, int V, std::int32_t ignore_index, cudaStream_t s) {
  return forward(losses, probs, logits, targets, N, V, ignore_index, s);
}
Status softmax_crossentropy_forward(float* losses, float16* probs, const float16* logits, const std::int32_t* targets,
                                    int N, int V, std::int32_t ignore_index, cudaStream_t s) {
  return forward(losses, probs, logits, targets, N, V, ignore_index, s);
}

Status softmax_crossentropy_backward(float* dlogits, const float* dlosses, const float* probs,
                                     const std::int32_t* targets, int N, int V, std::int32_t ignore_index,
                                     cudaStream_t s) {
  return backward(dlogits, dlosses, probs, targets, N, V, ignore_index, s);
}
Status softmax_crossentropy_backward(bfloat16* dlogits, const float* dlosses, const bfloat16* probs,
                                     const std::int32_t* targets, int N, int V, std::int32_t ignore_index,
                                     cudaStream_t s) {
  return backward(dlogits, dlosses, probs, targets, N, V, ignore_index, s);
}
Status softmax_crossentropy_backward(float16* dlogits, const float* dlosses, const float16* probs,
                                     const std::int32_t* targets, int N, int V, std::int32_t ignore_index,
                                     cudaStream_t s) {
  return backward(dlogits, dlosses, probs, targets, N, V, ignore_index, s);
}

}  // namespace plansight::kernels::cuda
