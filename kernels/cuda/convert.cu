// Element-type conversions, grid-stride: widen to fp32, round once to the output type.
#include "plansight/kernels/cuda/convert.h"

#include "common.cuh"
#include "dtype.cuh"

namespace plansight::kernels::cuda {
namespace {

template <class Out, class In>
__global__ void convert_kernel(Out* out, const In* in, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = detail::from_float<Out>(detail::to_float(in[i]));
  }
}

template <class Out, class In>
Status launch(Out* out, const In* in, std::size_t n, cudaStream_t stream) {
  convert_kernel<Out, In><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(out, in, n);
  return detail::launch_status("convert_kernel");
}

}  // namespace

Status convert(bfloat16* out, const float* in, std::size_t n, cudaStream_t s) { return launch(out, in, n, s); }
Status convert(float16* out, const float* in, std::size_t n, cudaStream_t s) { return launch(out, in, n, s); }
Status convert(float* out, const bfloat16* in, std::size_t n, cudaStream_t s) { return launch(out, in, n, s); }
Status convert(float* out, const float16* in, std::size_t n, cudaStream_t s) { return launch(out, in, n, s); }

}  // namespace plansight::kernels::cuda
