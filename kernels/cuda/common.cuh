// Shared by the CUDA twins: launch-error checking into a Status (never exit(), unlike llm.c's
// cudaCheck), grid sizing for grid-stride loops, and warp/block reductions via __shfl_xor_sync
// (butterfly reduction: every lane ends with the result; CUDA C++ Programming Guide, "Warp Shuffle").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda::detail {

// Status of the launch just made: cudaGetLastError() (which also clears a sticky launch error).
Status launch_status(const char* kernel);

// Threads per block for element-wise kernels; a multiple of the warp size.
inline constexpr int kBlockSize = 256;

// Blocks for a grid-stride loop over n elements, capped so the grid stays a valid size; the
// loop covers whatever the grid does not.
inline unsigned int grid_for(std::size_t n) {
  const std::size_t blocks = (n + kBlockSize - 1) / kBlockSize;
  const std::size_t cap = 65535u * 32u;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

__device__ inline float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ inline float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

// Block-wide reductions; every thread of the block must call them and gets the result.
// `scratch` holds 32 floats of shared memory, free again when the call returns.
__device__ inline float block_sum(float x, float* scratch) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = (blockDim.x + 31) / 32;
  x = warp_sum(x);
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  x = lane < warps ? scratch[lane] : 0.0f;
  x = warp_sum(x);
  __syncthreads();
  return x;
}

__device__ inline float block_max(float x, float* scratch) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = (blockDim.x + 31) / 32;
  x = warp_max(x);
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  x = lane < warps ? scratch[lane] : -INFINITY;
  x = warp_max(x);
  __syncthreads();
  return x;
}

}  // namespace plansight::kernels::cuda::detail
