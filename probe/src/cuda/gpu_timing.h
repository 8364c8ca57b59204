// Timing helpers of the GPU calibration: a call repeated between two CUDA events (the device's
// time, not the host's), median over trials; and the median of a vector.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::probe::cuda {

// A trial of back-to-back calls lasts at least this long: the quick calibration's 5 calls of a
// TP-split GPT-2 GEMM (about 10 us each on an H200) made trials of 50 us, and on one run every
// such sample came out 40% slower than on the runs before and after it (bench/results/
// gpu-check-h200-2026-11-28-c), while the step's kernels of those shapes took 8-10 us: a trial
// that short times whatever else happened in those 50 us (a host stall, a clock change) as much
// as the calls. A millisecond is a few hundred of the shortest calls,
// and the GPT-2 step's own stretches of back-to-back kernels last longer still.
inline constexpr double kMinTrialSeconds = 1e-3;
inline constexpr int kMaxCallsPerTrial = 20000;

// Per-call seconds of `call` (which enqueues on `stream` and reports failures as a non-empty
// string): one warm-up call, one sizing trial of `reps` calls (when shorter than min_trial_s,
// later trials get as many calls as fill min_trial_s, at most kMaxCallsPerTrial), then `trials`
// trials of back-to-back calls, timed with events on `stream`; the median trial divided by its calls.
Result<double> seconds_per_call(cudaStream_t stream, int trials, int reps, const std::function<std::string()>& call,
                                double min_trial_s = kMinTrialSeconds);

double median(std::vector<double> values);

// Errors from CUDA runtime calls, naming the call.
Result<bool> cuda_ok(cudaError_t error, const std::string& call);

}  // namespace plansight::probe::cuda
