// Element-type conversions on the device: fp32 master weights to their 16-bit compute copy, and
// 16-bit buffers back to fp32 (tests, reductions). Round to nearest even; grid-stride over n.
#pragma once

#include <cstddef>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

Status convert(bfloat16* out, const float* in, std::size_t n, cudaStream_t stream);
Status convert(float16* out, const float* in, std::size_t n, cudaStream_t stream);
Status convert(float* out, const bfloat16* in, std::size_t n, cudaStream_t stream);
Status convert(float* out, const float16* in, std::size_t n, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
