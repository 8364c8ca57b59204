// Device half of dynamic loss scaling (Micikevicius et al. 2018, "Mixed Precision Training",
// §3.2; the same split as PyTorch's GradScaler: a device check-and-unscale, a host decision).
// The backward runs on loss * scale, so the fp32 gradients arrive multiplied by the scale; this
// kernel divides them back and raises a flag when any is inf or NaN. The host state machine
// that picks the scale and skips steps is plansight::runtime::cuda::LossScaler.
#pragma once

#include <cstddef>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// grads[i] *= multiplier (1 / scale) in place, and *found_nonfinite = 1 when any grads[i] is inf
// or NaN. The flag is only ever set, never cleared: zero it once per step, and several gradient
// buffers may share it.
Status unscale_and_check_finite(float* grads, std::size_t n, float multiplier, int* found_nonfinite,
                                cudaStream_t stream);

// *found_nonfinite = 1 when any of the n values is inf or NaN (16-bit activations or gradients
// that never pass through an fp32 buffer). Same flag rule as above.
Status check_finite(const float* values, std::size_t n, int* found_nonfinite, cudaStream_t stream);
Status check_finite(const bfloat16* values, std::size_t n, int* found_nonfinite, cudaStream_t stream);
Status check_finite(const float16* values, std::size_t n, int* found_nonfinite, cudaStream_t stream);

// *found_nonfinite = 1.0f when any of the n fp32 values is inf or NaN: the same check with a
// float flag, which a communicator can sum over ranks so that every rank skips the step alike.
Status flag_nonfinite(const float* values, std::size_t n, float* found_nonfinite, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
