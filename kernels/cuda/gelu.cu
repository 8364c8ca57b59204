// GeLU (tanh approximation, Hendrycks & Gimpel 2016, §2), CUDA; element-wise, grid-stride.
// The derivative is the product rule on 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// as in the CPU twin (kernels/cpu/gelu.cpp), with tanhf for std::tanh. One template over the
// element type; 16-bit values are widened to fp32 for the math.
#include "plansight/kernels/cuda/gelu.h"

#include "common.cuh"
#include "dtype.cuh"

namespace plansight::kernels::cuda {
namespace {

constexpr float kSqrtTwoOverPi = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kCubic = 0.044715f;                     // Hendrycks & Gimpel 2016, §2

template <class T>
__global__ void gelu_forward_kernel(T* out, const T* inp, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float x = detail::to_float(inp[i]);
    const float u = kSqrtTwoOverPi * (x + kCubic * x * x * x);
    out[i] = detail::from_float<T>(0.5f * x * (1.0f + tanhf(u)));
  }
}

template <class T>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float x = detail::to_float(inp[i]);
    const float u = kSqrtTwoOverPi * (x + kCubic * x * x * x);
    const float tanh_u = tanhf(u);
    const float sech2_u = 1.0f - tanh_u * tanh_u;
    const float du_dx = kSqrtTwoOverPi * (1.0f + 3.0f * kCubic * x * x);
    const float local = 0.5f * (1.0f + tanh_u) + 0.5f * x * sech2_u * du_dx;
    dinp[i] = detail::from_float<T>(detail::to_float(dinp[i]) + local * detail::to_float(dout[i]));
  }
}

template <class T>
Status forward(T* out, const T* inp, std::size_t n, cudaStream_t stream) {
  gelu_forward_kernel<T><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(out, inp, n);
  return detail::launch_status("gelu_forward_kernel");
}

template <class T>
Status backward(T* dinp, const T* inp, const T* dout, std::size_t n, cudaStream_t stream) {
  gelu_backward_kernel<T><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(dinp, inp, dout, n);
  return detail::launch_status("gelu_backward_kernel");
}

}  // namespace

Status gelu_forward(float* out, const float* inp, std::size_t n, cudaStream_t s) { return forward(out, inp, n, s); }
Status gelu_forward(bfloat16* out, const bfloat16* inp, std::size_t n, cudaStream_t s) { return forward(out, inp, n, s); }
Status gelu_forward(float16* out, const float16* inp, std::size_t n, cudaStream_t s) { return forward(out, inp, n, s); }

Status gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n, cudaStream_t s) {
  return backward(dinp, inp, dout, n, s);
}
Status gelu_backward(bfloat16* dinp, const bfloat16* inp, const bfloat16* dout, std::size_t n, cudaStream_t s) {
  return backward(dinp, inp, dout, n, s);
}
Status gelu_backward(float16* dinp, const float16* inp, const float16* dout, std::size_t n, cudaStream_t s) {
  return backward(dinp, inp, dout, n, s);
}

}  // namespace plansight::kernels::cuda
