// sum_buffers (reduce_kernels.h): grid-stride over n; every thread reads its element from each
// rank's buffer in rank order and adds in fp32, so the sum is the same on every rank. One kernel
// template for the three element types; for fp32 it is the plain float sum, for bf16/fp16 the
// inputs are widened exactly and the fp32 sum is rounded once when stored.
#include "reduce_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

namespace plansight::runtime::cuda {
namespace {

template <class T>
struct Sources {
  const T* ptr[kMaxGroupRanks];
  int count;
};

__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float widen(__half x) { return __half2float(x); }

__device__ __forceinline__ void store(float* dst, float x) { *dst = x; }
__device__ __forceinline__ void store(__nv_bfloat16* dst, float x) { *dst = __float2bfloat16_rn(x); }
__device__ __forceinline__ void store(__half* dst, float x) { *dst = __float2half_rn(x); }

template <class T>
__global__ void sum_buffers_kernel(T* dst, Sources<T> srcs, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int q = 0; q < srcs.count; ++q) sum += widen(srcs.ptr[q][i]);
    store(dst + i, sum);
  }
}

template <class T>
kernels::cuda::Status launch(T* dst, const T* const* srcs, int count, std::size_t n, cudaStream_t stream) {
  if (count < 1 || count > kMaxGroupRanks) {
    return kernels::cuda::Status(static_cast<int>(cudaErrorInvalidValue),
                                 "sum_buffers: " + std::to_string(count) + " buffers; valid: 1.." +
                                     std::to_string(kMaxGroupRanks));
  }
  if (n == 0) return {};
  Sources<T> sources{};
  for (int q = 0; q < count; ++q) sources.ptr[q] = srcs[q];
  sources.count = count;
  constexpr int kBlock = 256;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  const unsigned int grid = static_cast<unsigned int>(blocks < 65535u * 32u ? blocks : 65535u * 32u);
  sum_buffers_kernel<T><<<grid, kBlock, 0, stream>>>(dst, sources, n);
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) return {};
  return kernels::cuda::Status(static_cast<int>(error),
                               std::string("sum_buffers_kernel: ") + cudaGetErrorName(error) + " (" +
                                   cudaGetErrorString(error) + ")");
}

}  // namespace

kernels::cuda::Status sum_buffers(float* dst, const float* const* srcs, int count, std::size_t n, cudaStream_t stream) {
  return launch(dst, srcs, count, n, stream);
}

kernels::cuda::Status sum_buffers(kernels::cuda::bfloat16* dst, const kernels::cuda::bfloat16* const* srcs, int count,
                                  std::size_t n, cudaStream_t stream) {
  return launch(dst, srcs, count, n, stream);
}

kernels::cuda::Status sum_buffers(kernels::cuda::float16* dst, const kernels::cuda::float16* const* srcs, int count,
                                  std::size_t n, cudaStream_t stream) {
  return launch(dst, srcs, count, n, stream);
}

}  // namespace plansight::runtime::cuda
