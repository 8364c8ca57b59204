// CUDA twin of plansight/kernels/adamw.h: AdamW (Loshchilov & Hutter 2019, Algorithm 2) with
// Adam's bias correction (Kingma & Ba 2015), fp32 params and moments, same parameters plus the
// stream. The bias corrections are computed once on the host, exactly as the CPU twin does.
// The mixed-precision overloads update an fp32 master copy (Micikevicius et al. 2018, §3.1) and
// write the rounded compute copy (bf16/fp16/fp32) that forward and backward read.
#pragma once

#include <cstddef>

#include "plansight/kernels/adamw.h"
#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// One step (step = 1 first) over n floats of device memory; updates params, m and v in place.
Status adamw_update(float* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, cudaStream_t stream);

// Mixed precision: g = grads * grad_multiplier (1 / loss scale, or 1), the same AdamW step on
// master_params, then params = round(master_params). grads stay unmodified.
Status adamw_update(float* master_params, float* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, cudaStream_t stream);
Status adamw_update(float* master_params, bfloat16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, cudaStream_t stream);
Status adamw_update(float* master_params, float16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, cudaStream_t stream);

// The mixed-precision step of a dynamically loss-scaled run: does nothing when *skip_when_set is
// not 0 (the step's gradients held an inf or NaN; its flag is read on the device, so skipping
// needs no host synchronisation). Moments, master and compute copy stay as they were.
Status adamw_update(float* master_params, bfloat16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, const float* skip_when_set,
                    cudaStream_t stream);
Status adamw_update(float* master_params, float16* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, float grad_multiplier, const float* skip_when_set,
                    cudaStream_t stream);

}  // namespace plansight::kernels::cuda
