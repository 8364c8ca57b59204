// Encoder (token + position embedding), CUDA. Forward: one thread per output element.
// Backward: one thread per dout element, atomicAdd into dwte[token] and dwpe[t]: tokens repeat
// within a batch and every (b, t) shares wpe[t], so rows collide; fp32 atomicAdd makes the sum
// order (not the value beyond rounding) run-dependent. llm.c's encoder_backward avoids this with
// per-token buckets; that is a later optimisation here.
#include "plansight/kernels/cuda/encoder.h"

#include "common.cuh"

namespace plansight::kernels::cuda {
namespace {

__global__ void encoder_forward_kernel(float* out, const std::int32_t* tokens, const float* wte,
                                       const float* wpe, int T, int C, std::size_t total) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t bt = i / C;
    const int c = static_cast<int>(i % C);
    const int t = static_cast<int>(bt % T);
    const std::size_t token = static_cast<std::size_t>(tokens[bt]);
    out[i] = wte[token * C + c] + wpe[static_cast<std::size_t>(t) * C + c];
  }
}

__global__ void encoder_backward_kernel(float* dwte, float* dwpe, const float* dout,
                                        const std::int32_t* tokens, int T, int C,
                                        std::size_t total) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t bt = i / C;
    const int c = static_cast<int>(i % C);
    const int t = static_cast<int>(bt % T);
    const std::size_t token = static_cast<std::size_t>(tokens[bt]);
    const float d = dout[i];
    atomicAdd(&dwte[token * C + c], d);
    atomicAdd(&dwpe[static_cast<std::size_t>(t) * C + c], d);
  }
}

}  // namespace

Status encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe,
                       int B, int T, int C, cudaStream_t stream) {
  const std::size_t total = static_cast<std::size_t>(B) * T * C;
  encoder_forward_kernel<<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(
      out, tokens, wte, wpe, T, C, total);
  return detail::launch_status("encoder_forward_kernel");
}

Status encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens,
                        int B, int T, int C, cudaStream_t stream) {
  const std::size_t total = static_cast<std::size_t>(B) * T * C;
  encoder_backward_kernel<<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(
      dwte, dwpe, dout, tokens, T, C, total);
  return detail::launch_status("encoder_backward_kernel");
}

}  // namespace plansight::kernels::cuda
