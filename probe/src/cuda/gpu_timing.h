// Timing helpers of the GPU calibration: a call repeated between two CUDA events (the device's
// time, not the host's), median over trials; and the median of a vector.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::probe::cuda {

// Per-call seconds of `call` (which enqueues on `stream` and reports failures as a non-empty
// string): one warm-up call, then `trials` trials of `reps` back-to-back calls each, timed with
// events on `stream`; the median trial divided by reps.
Result<double> seconds_per_call(cudaStream_t stream, int trials, int reps, const std::function<std::string()>& call);

double median(std::vector<double> values);

// Errors from CUDA runtime calls, naming the call.
Result<bool> cuda_ok(cudaError_t error, const std::string& call);

}  // namespace plansight::probe::cuda
