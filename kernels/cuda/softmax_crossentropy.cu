// Softmax + cross-entropy, CUDA. Forward: one block per row; the row maximum is subtracted before
// exp (exact, and no overflow), the normaliser is a block sum, and the loss is
// log Σ exp(z - max) - (z_y - max), finite even when p_y underflows (as the CPU twin).
// Backward: element-wise over [N,V], d(-log softmax_y)/dz_j = p_j - [j == y], scaled by dlosses.
// 16-bit logits are widened to fp32; the loss comes from the fp32 logits, not from rounded probs.
#include "plansight/kernels/cuda/softmax_crossentropy.h"

#include "common.cuh"
#include "dtype.cuh"

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

template <class T>
__global__ void softmax_crossentropy_backward_kernel(T* dlogits, const float* dlosses, const T* probs,
                                                     const std::int32_t* targets, int V, std::int32_t ignore_index,
                                                     std::size_t total) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t row = i / V;
    const std::int32_t y = targets[row];
    if (y == ignore_index) continue;
    const float dl = dlosses[row];
    float d = detail::to_float(dlogits[i]) + detail::to_float(probs[i]) * dl;
    if (static_cast<std::int32_t>(i % V) == y) d -= dl;
    dlogits[i] = detail::from_float<T>(d);
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
  const std::size_t total = static_cast<std::size_t>(N) * V;
  softmax_crossentropy_backward_kernel<T><<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(
      dlogits, dlosses, probs, targets, V, ignore_index, total);
  return detail::launch_status("softmax_crossentropy_backward_kernel");
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
