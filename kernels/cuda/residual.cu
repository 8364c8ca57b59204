// Residual connection (He et al. 2016), CUDA; element-wise, grid-stride. The backward adds dout
// to both inputs' gradients (accumulating, like every backward here).
#include "plansight/kernels/cuda/residual.h"

#include "common.cuh"

namespace plansight::kernels::cuda {
namespace {

__global__ void residual_forward_kernel(float* out, const float* inp1, const float* inp2,
                                        std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = inp1[i] + inp2[i];
  }
}

__global__ void residual_backward_kernel(float* dinp1, float* dinp2, const float* dout,
                                         std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float d = dout[i];
    dinp1[i] += d;
    dinp2[i] += d;
  }
}

}  // namespace

Status residual_forward(float* out, const float* inp1, const float* inp2, std::size_t n,
                        cudaStream_t stream) {
  residual_forward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(out, inp1, inp2, n);
  return detail::launch_status("residual_forward_kernel");
}

Status residual_backward(float* dinp1, float* dinp2, const float* dout, std::size_t n,
                         cudaStream_t stream) {
  residual_backward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(dinp1, dinp2,
                                                                                 dout, n);
  return detail::launch_status("residual_backward_kernel");
}

}  // namespace plansight::kernels::cuda
