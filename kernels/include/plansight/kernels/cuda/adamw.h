// CUDA twin of plansight/kernels/adamw.h: AdamW (Loshchilov & Hutter 2019, Algorithm 2) with
// Adam's bias correction (Kingma & Ba 2015), fp32 params and moments, same parameters plus the
// stream. The bias corrections are computed once on the host, exactly as the CPU twin does.
#pragma once

#include <cstddef>

#include "plansight/kernels/adamw.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// One step (step = 1 first) over n floats of device memory; updates params, m and v in place.
Status adamw_update(float* params, float* m, float* v, const float* grads, std::size_t n,
                    const AdamWSettings& settings, int step, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
