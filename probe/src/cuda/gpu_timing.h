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
// gpu-check-h200-2026-11-28-c): a trial that short times whatever else happened in those 50 us
// (a host stall, a clock change) as much as the calls. A millisecond is a hundred or more of the
// shortest calls.
inline constexpr double kMinTrialSeconds = 1e-3;
// At most this many calls a trial: a held trial's calls wait in the stream's launch queue, which
// holds about a thousand launches before the host blocks (a GEMM is one or two, splitK's reduction
// the second).
inline constexpr int kMaxCallsPerTrial = 400;
inline constexpr int kMaxHoldRetries = 3;

// Per-call seconds of `call` (which enqueues on `stream` and reports failures as a non-empty
// string), as the GPU runs it back to back: one warm-up call; one sizing trial of `reps` calls,
// which sets how many calls fill min_trial_s (at most kMaxCallsPerTrial) and how long the host
// takes to enqueue them; then `trials` trials, each behind a hold (kernels::cuda::hold_stream) that
// lasts until the host has enqueued every call, timed with events on `stream` after the hold (once
// lengthened when the first runs under half of min_trial_s: held, calls run faster than the sizing
// trial saw); the median trial divided by its calls. Unheld, a GEMM of a few microseconds is timed at the host's
// enqueue rate: the H200's cuBLASLt GEMM enqueue took 7.6-10.3 us, its 2048 x 768 x 768 GEMMs ran
// in 6.6-7.6 us in the step (gpu-check-h200-2026-11-28-d) and were calibrated at 9.8-15.7 us. A
// trial whose hold ended before the last call was in is run again with a hold four times longer
// (kMaxHoldRetries times, then kept). Hold::none times the trials as they come, for calls that
// wait for the GPU themselves (a copy from pageable memory returns only once it is done, so a
// hold would only make it wait longer), or that are long enough that enqueueing them is nothing.
enum class Hold { until_enqueued, none };
Result<double> seconds_per_call(cudaStream_t stream, int trials, int reps, const std::function<std::string()>& call,
                                double min_trial_s = kMinTrialSeconds, Hold hold = Hold::until_enqueued);

double median(std::vector<double> values);

// Errors from CUDA runtime calls, naming the call.
Result<bool> cuda_ok(cudaError_t error, const std::string& call);

}  // namespace plansight::probe::cuda
