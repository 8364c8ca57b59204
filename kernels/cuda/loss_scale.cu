// Check-and-unscale of fp32 gradients, grid-stride. Every thread that meets a non-finite value
// stores 1 into the flag: the stores race, but all store the same value, so no atomic is needed
// (the flag is read only after the stream is synchronised).
#include "plansight/kernels/cuda/loss_scale.h"

#include "common.cuh"
#include "dtype.cuh"

namespace plansight::kernels::cuda {
namespace {

__global__ void unscale_and_check_finite_kernel(float* grads, std::size_t n, float multiplier, int* found) {
  bool bad = false;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float g = grads[i];
    bad |= !isfinite(g);
    grads[i] = g * multiplier;
  }
  if (bad) *found = 1;
}

template <class T, class Flag>
__global__ void check_finite_kernel(const T* values, std::size_t n, Flag* found) {
  bool bad = false;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    bad |= !isfinite(detail::to_float(values[i]));
  }
  if (bad) *found = 1;
}

template <class T>
Status check(const T* values, std::size_t n, int* found, cudaStream_t stream) {
  check_finite_kernel<T, int><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(values, n, found);
  return detail::launch_status("check_finite_kernel");
}

}  // namespace

Status unscale_and_check_finite(float* grads, std::size_t n, float multiplier, int* found_nonfinite,
                                cudaStream_t stream) {
  unscale_and_check_finite_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(grads, n, multiplier,
                                                                                          found_nonfinite);
  return detail::launch_status("unscale_and_check_finite_kernel");
}

Status check_finite(const float* v, std::size_t n, int* found, cudaStream_t s) { return check(v, n, found, s); }
Status check_finite(const bfloat16* v, std::size_t n, int* found, cudaStream_t s) { return check(v, n, found, s); }
Status check_finite(const float16* v, std::size_t n, int* found, cudaStream_t s) { return check(v, n, found, s); }

Status flag_nonfinite(const float* values, std::size_t n, float* found, cudaStream_t stream) {
  check_finite_kernel<float, float><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(values, n, found);
  return detail::launch_status("check_finite_kernel");
}

}  // namespace plansight::kernels::cuda
