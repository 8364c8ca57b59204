// Encoder (token + position embedding), CUDA. Forward: one thread per output element.
// Backward: one thread per dout element, atomicAdd into the fp32 dwte[token] and dwpe[t]: tokens
// repeat within a batch and every (b, t) shares wpe[t], so rows collide; fp32 atomicAdd makes the
// sum order (not the value beyond rounding) run-dependent. llm.c's encoder_backward avoids this
// with per-token buckets; that is a later optimisation here.
#include "plansight/kernels/cuda/encoder.h"

#include "common.cuh"
#include "dtype.cuh"

namespace plansight::kernels::cuda {
namespace {

template <class T>
__global__ void encoder_forward_kernel(T* out, const std::int32_t* tokens, const T* wte, const T* wpe, int T_,
                                       int C, std::size_t total) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t bt = i / C;
    const int c = static_cast<int>(i % C);
    const int t = static_cast<int>(bt % T_);
    const std::size_t token = static_cast<std::size_t>(tokens[bt]);
    out[i] = detail::from_float<T>(detail::to_float(wte[token * C + c]) +
                                   detail::to_float(wpe[static_cast<std::size_t>(t) * C + c]));
  }
}

template <class T>
__global__ void encoder_backward_kernel(float* dwte, float* dwpe, const T* dout, const std::int32_t* tokens,
                                        int T_, int C, std::size_t total) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t bt = i / C;
    const int c = static_cast<int>(i % C);
    const int t = static_cast<int>(bt % T_);
    const std::size_t token = static_cast<std::size_t>(tokens[bt]);
    const float d = detail::to_float(dout[i]);
    atomicAdd(&dwte[token * C + c], d);
    atomicAdd(&dwpe[static_cast<std::size_t>(t) * C + c], d);
  }
}

template <class T>
Status forward(T* out, const std::int32_t* tokens, const T* wte, const T* wpe, int B, int T_, int C,
               cudaStream_t stream) {
  const std::size_t total = static_cast<std::size_t>(B) * T_ * C;
  encoder_forward_kernel<T><<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(out, tokens, wte, wpe,
                                                                                        T_, C, total);
  return detail::launch_status("encoder_forward_kernel");
}

template <class T>
Status backward(float* dwte, float* dwpe, const T* dout, const std::int32_t* tokens, int B, int T_, int C,
                cudaStream_t stream) {
  const std::size_t total = static_cast<std::size_t>(B) * T_ * C;
  encoder_backward_kernel<T><<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(dwte, dwpe, dout,
                                                                                         tokens, T_, C, total);
  return detail::launch_status("encoder_backward_kernel");
}

}  // namespace

Status encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T,
                       int C, cudaStream_t s) {
  return forward(out, tokens, wte, wpe, B, T, C, s);
}
Status encoder_forward(bfloat16* out, const std::int32_t* tokens, const bfloat16* wte, const bfloat16* wpe, int B, int T,
                       int C, cudaStream_t s) {
  return forward(out, tokens, wte, wpe, B, T, C, s);
}
Status encoder_forward(float16* out, const std::int32_t* tokens, const float16* wte, const float16* wpe, int B, int T,
                       int C, cudaStream_t s) {
  return forward(out, tokens, wte, wpe, B, T, C, s);
}

Status encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens, int B, int T,
                        int C, cudaStream_t s) {
  return backward(dwte, dwpe, dout, tokens, B, T, C, s);
}
Status encoder_backward(float* dwte, float* dwpe, const bfloat16* dout, const std::int32_t* tokens, int B, int T,
                        int C, cudaStream_t s) {
  return backward(dwte, dwpe, dout, tokens, B, T, C, s);
}
Status encoder_backward(float* dwte, float* dwpe, const float16* dout, const std::int32_t* tokens, int B, int T,
                        int C, cudaStream_t s) {
  return backward(dwte, dwpe, dout, tokens, B, T, C, s);
}

}  // namespace plansight::kernels::cuda
