// GeLU (tanh approximation, Hendrycks & Gimpel 2016, §2), CUDA; element-wise, grid-stride over
// 16-byte packs (vec.cuh) when every pointer is 16-byte aligned, the last n % width elements one
// per thread.
// The derivative is the product rule on 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// as in the CPU twin (kernels/cpu/gelu.cpp), with tanhf for std::tanh. One template over the
// element type; 16-bit values are widened to fp32 for the math.
#include "plansight/kernels/cuda/gelu.h"

#include "common.cuh"
#include "dtype.cuh"
#include "vec.cuh"

namespace plansight::kernels::cuda {
namespace {

constexpr float kSqrtTwoOverPi = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kCubic = 0.044715f;                     // Hendrycks & Gimpel 2016, §2

__device__ inline float gelu(float x) {
  const float u = kSqrtTwoOverPi * (x + kCubic * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}

// d gelu(x) / dx.
__device__ inline float gelu_derivative(float x) {
  const float u = kSqrtTwoOverPi * (x + kCubic * x * x * x);
  const float tanh_u = tanhf(u);
  const float sech2_u = 1.0f - tanh_u * tanh_u;
  const float du_dx = kSqrtTwoOverPi * (1.0f + 3.0f * kCubic * x * x);
  return 0.5f * (1.0f + tanh_u) + 0.5f * x * sech2_u * du_dx;
}

// Packs 0..n / kWidth - 1 grid-stride, then the tail n - n % kWidth.. by the first threads.
template <class T, int kWidth>
__global__ void gelu_forward_kernel(T* out, const T* inp, std::size_t n) {
  const std::size_t packs = n / kWidth;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (std::size_t j = first; j < packs; j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float x[kWidth];
    detail::load_pack(x, inp + j * kWidth);
#pragma unroll
    for (int i = 0; i < kWidth; ++i) x[i] = gelu(x[i]);
    detail::store_pack(out + j * kWidth, x);
  }
  const std::size_t i = packs * kWidth + first;
  if (i < n) out[i] = detail::from_float<T>(gelu(detail::to_float(inp[i])));
}

// Overwrite: dinp = gelu'(inp) * dout, without reading dinp (whose contents may be anything).
template <class T, int kWidth, bool Overwrite>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, std::size_t n) {
  const std::size_t packs = n / kWidth;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (std::size_t j = first; j < packs; j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float x[kWidth], dy[kWidth], dx[kWidth] = {};
    detail::load_pack(x, inp + j * kWidth);
    detail::load_pack(dy, dout + j * kWidth);
    if constexpr (!Overwrite) detail::load_pack(dx, dinp + j * kWidth);
#pragma unroll
    for (int i = 0; i < kWidth; ++i) dx[i] += gelu_derivative(x[i]) * dy[i];
    detail::store_pack(dinp + j * kWidth, dx);
  }
  const std::size_t i = packs * kWidth + first;
  if (i < n) {
    const float old = Overwrite ? 0.0f : detail::to_float(dinp[i]);
    dinp[i] = detail::from_float<T>(old + gelu_derivative(detail::to_float(inp[i])) * detail::to_float(dout[i]));
  }
}

template <class T>
Status forward(T* out, const T* inp, std::size_t n, cudaStream_t stream) {
  if (detail::all_aligned16(out, inp)) {
    constexpr int W = detail::kVecWidth<T>;
    gelu_forward_kernel<T, W><<<detail::grid_for(n / W), detail::kBlockSize, 0, stream>>>(out, inp, n);
  } else {
    gelu_forward_kernel<T, 1><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(out, inp, n);
  }
  return detail::launch_status("gelu_forward_kernel");
}

template <class T, bool Overwrite>
void launch_backward(T* dinp, const T* inp, const T* dout, std::size_t n, cudaStream_t stream) {
  if (detail::all_aligned16(dinp, inp, dout)) {
    constexpr int W = detail::kVecWidth<T>;
    gelu_backward_kernel<T, W, Overwrite><<<detail::grid_for(n / W), detail::kBlockSize, 0, stream>>>(dinp, inp, dout, n);
  } else {
    gelu_backward_kernel<T, 1, Overwrite><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(dinp, inp, dout, n);
  }
}

template <class T>
Status backward(T* dinp, const T* inp, const T* dout, std::size_t n, cudaStream_t stream, Gradient mode) {
  if (mode == Gradient::overwrite) {
    launch_backward<T, true>(dinp, inp, dout, n, stream);
  } else {
    launch_backward<T, false>(dinp, inp, dout, n, stream);
  }
  return detail::launch_status("gelu_backward_kernel");
}

}  // namespace

Status gelu_forward(float* out, const float* inp, std::size_t n, cudaStream_t s) { return forward(out, inp, n, s); }
Status gelu_forward(bfloat16* out, const bfloat16* inp, std::size_t n, cudaStream_t s) { return forward(out, inp, n, s); }
Status gelu_forward(float16* out, const float16* inp, std::size_t n, cudaStream_t s) { return forward(out, inp, n, s); }

Status gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n, cudaStream_t s, Gradient mode) {
  return backward(dinp, inp, dout, n, s, mode);
}
Status gelu_backward(bfloat16* dinp, const bfloat16* inp, const bfloat16* dout, std::size_t n, cudaStream_t s, Gradient mode) {
  return backward(dinp, inp, dout, n, s, mode);
}
Status gelu_backward(float16* dinp, const float16* inp, const float16* dout, std::size_t n, cudaStream_t s, Gradient mode) {
  return backward(dinp, inp, dout, n, s, mode);
}

}  // namespace plansight::kernels::cuda
