// sum_buffers (reduce_kernels.h): grid-stride over n; every thread reads its element from each
// rank's buffer in rank order, so the floating-point sum is the same on every rank.
#include "reduce_kernels.h"

#include <cuda_runtime.h>

#include <string>

namespace plansight::runtime::cuda {
namespace {

struct Sources {
  const float* ptr[kMaxGroupRanks];
  int count;
};

__global__ void sum_buffers_kernel(float* dst, Sources srcs, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int q = 0; q < srcs.count; ++q) sum += srcs.ptr[q][i];
    dst[i] = sum;
  }
}

}  // namespace

kernels::cuda::Status sum_buffers(float* dst, const float* const* srcs, int count, std::size_t n, cudaStream_t stream) {
  if (count < 1 || count > kMaxGroupRanks) {
    return kernels::cuda::Status(static_cast<int>(cudaErrorInvalidValue),
                                 "sum_buffers: " + std::to_string(count) + " buffers; valid: 1.." +
                                     std::to_string(kMaxGroupRanks));
  }
  if (n == 0) return {};
  Sources sources{};
  for (int q = 0; q < count; ++q) sources.ptr[q] = srcs[q];
  sources.count = count;
  constexpr int kBlock = 256;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  const unsigned int grid = static_cast<unsigned int>(blocks < 65535u * 32u ? blocks : 65535u * 32u);
  sum_buffers_kernel<<<grid, kBlock, 0, stream>>>(dst, sources, n);
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) return {};
  return kernels::cuda::Status(static_cast<int>(error),
                               std::string("sum_buffers_kernel: ") + cudaGetErrorName(error) + " (" +
                                   cudaGetErrorString(error) + ")");
}

}  // namespace plansight::runtime::cuda
