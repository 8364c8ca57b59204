// Residual connection (He et al. 2016), CUDA; element-wise, grid-stride. The backward adds dout
// to both inputs' gradients (accumulating, like every backward here). One template over the
// element type; sums are formed in fp32 and rounded once.
#include "plansight/kernels/cuda/residual.h"

#include "common.cuh"
#include "dtype.cuh"

namespace plansight::kernels::cuda {
namespace {

template <class T>
__global__ void residual_forward_kernel(T* out, const T* inp1, const T* inp2, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = detail::from_float<T>(detail::to_float(inp1[i]) + detail::to_float(inp2[i]));
  }
}

template <class T>
__global__ void residual_backward_kernel(T* dinp1, T* dinp2, const T* dout, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float d = detail::to_float(dout[i]);
    dinp1[i] = detail::from_float<T>(detail::to_float(dinp1[i]) + d);
    dinp2[i] = detail::from_float<T>(detail::to_float(dinp2[i]) + d);
  }
}

template <class T>
Status forward(T* out, const T* inp1, const T* inp2, std::size_t n, cudaStream_t stream) {
  residual_forward_kernel<T><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(out, inp1, inp2, n);
  return detail::launch_status("residual_forward_kernel");
}

template <class T>
Status backward(T* dinp1, T* dinp2, const T* dout, std::size_t n, cudaStream_t stream) {
  residual_backward_kernel<T><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(dinp1, dinp2, dout, n);
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
