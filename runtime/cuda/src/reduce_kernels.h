// The reduction kernel of the device communicator: dst[i] = Σ_q srcs[q][i] over the group's
// buffers, summed in rank order so that every rank computes bit-identical sums. 16-bit buffers
// are summed in fp32 and rounded once on store (round to nearest even). Plain C++ header.
#pragma once

#include <cstddef>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::runtime::cuda {

// At most this many ranks per group: the source pointers travel as one kernel parameter
// (64 x 8 bytes, well inside the 4 KiB parameter limit of the CUDA C++ Programming Guide).
inline constexpr int kMaxGroupRanks = 64;

// dst may be one of srcs (each element is read before it is written, by the same thread).
kernels::cuda::Status sum_buffers(float* dst, const float* const* srcs, int count, std::size_t n, cudaStream_t stream);
kernels::cuda::Status sum_buffers(kernels::cuda::bfloat16* dst, const kernels::cuda::bfloat16* const* srcs, int count,
                                  std::size_t n, cudaStream_t stream);
kernels::cuda::Status sum_buffers(kernels::cuda::float16* dst, const kernels::cuda::float16* const* srcs, int count,
                                  std::size_t n, cudaStream_t stream);

}  // namespace plansight::runtime::cuda
