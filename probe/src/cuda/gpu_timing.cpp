// seconds_per_call and median (gpu_timing.h).
#include "gpu_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "plansight/kernels/cuda/hold.h"

namespace plansight::probe::cuda {

namespace kc = plansight::kernels::cuda;

Result<bool> cuda_ok(cudaError_t error, const std::string& call) {
  if (error == cudaSuccess) return true;
  cudaGetLastError();
  return make_error("calibration", call + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  return values[mid];
}

Result<double> seconds_per_call(cudaStream_t stream, int trials, int reps, const std::function<std::string()>& call,
                                double min_trial_s, Hold hold) {
  cudaEvent_t begin = nullptr, end = nullptr;
  if (auto s = cuda_ok(cudaEventCreate(&begin), "cudaEventCreate"); !s) return s.errors();
  if (auto s = cuda_ok(cudaEventCreate(&end), "cudaEventCreate"); !s) {
    cudaEventDestroy(begin);
    return s.errors();
  }
  auto finish = [&](Result<double> r) {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
    return r;
  };
  struct Trial {
    double gpu_s = 0;          // between the events
    double enqueue_s = 0;      // the host's time to enqueue the calls
    bool ran_after = false;    // the GPU reached the first call only after the host had enqueued the last
  };
  // One trial of `calls` calls back to back, behind a hold of hold_ns (0: none).
  auto trial = [&](int calls, std::int64_t hold_ns) -> Result<Trial> {
    Trial t;
    if (kc::Status s = kc::hold_stream(hold_ns, stream); !s) return make_error("calibration", s.message());
    if (auto s = cuda_ok(cudaEventRecord(begin, stream), "cudaEventRecord"); !s) return s.errors();
    const auto enqueue_start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
      if (std::string e = call(); !e.empty()) return make_error("calibration", e);
    }
    t.enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - enqueue_start).count();
    if (auto s = cuda_ok(cudaEventRecord(end, stream), "cudaEventRecord"); !s) return s.errors();
    // Not ready: the hold still ran when the last call was in, so the calls run back to back.
    const cudaError_t reached = cudaEventQuery(begin);
    // The runtime may keep cudaErrorNotReady as the thread's last error, which the next launch's
    // check (cudaGetLastError) would then report as its own failure; it is no error: clear it
    // (PyTorch's CUDAStream::query does the same).
    if (reached == cudaErrorNotReady) cudaGetLastError();
    t.ran_after = hold_ns > 0 && reached == cudaErrorNotReady;
    if (reached != cudaSuccess && reached != cudaErrorNotReady) return cuda_ok(reached, "cudaEventQuery").errors();
    if (auto s = cuda_ok(cudaEventSynchronize(end), "cudaEventSynchronize"); !s) return s.errors();
    float ms = 0;
    if (auto s = cuda_ok(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime"); !s) return s.errors();
    t.gpu_s = static_cast<double>(ms) * 1e-3;
    return t;
  };
  if (std::string e = call(); !e.empty()) return finish(make_error("calibration", e));
  int calls = std::clamp(reps, 1, kMaxCallsPerTrial);
  // A sizing trial without a hold, which also warms the GPU up: its GPU time sets how many calls
  // fill min_trial_s (an upper bound: unheld, the GPU may wait for the host), its enqueue time how
  // long the hold must last for them.
  auto sizing = trial(calls, 0);
  if (!sizing) return finish(sizing.errors());
  const double enqueue_per_call_s = sizing->enqueue_s / calls;
  if (sizing->gpu_s < min_trial_s) {
    const double wanted = static_cast<double>(calls) * min_trial_s / std::max(sizing->gpu_s, 1e-9);
    calls = static_cast<int>(std::min(std::ceil(wanted), static_cast<double>(kMaxCallsPerTrial)));
  }
  // Twice the host's time, and 50 us for the first launch; four times longer after a trial whose
  // hold ended too soon (the host was slower than in the sizing trial), at most kMaxHoldRetries.
  double hold_s = hold == Hold::none ? 0.0 : 2 * enqueue_per_call_s * calls + 50e-6;
  std::vector<double> per_call;
  bool resized = hold_s == 0;
  for (int t = 0, retries = 0; t < std::max(trials, 1); ++t) {
    auto measured = trial(calls, static_cast<std::int64_t>(hold_s * 1e9));
    if (!measured) return finish(measured.errors());
    if (hold_s > 0 && !measured->ran_after && retries < kMaxHoldRetries) {
      ++retries;
      hold_s *= 4;
      --t;
      continue;
    }
    // Held, the calls may run faster than the sizing trial said (it ran at the host's pace): once,
    // lengthen the trials to fill min_trial_s at the held pace, and start them again.
    if (!resized && measured->ran_after && measured->gpu_s < min_trial_s / 2 && calls < kMaxCallsPerTrial) {
      resized = true;
      const double wanted = static_cast<double>(calls) * min_trial_s / std::max(measured->gpu_s, 1e-9);
      const int more = static_cast<int>(std::min(std::ceil(wanted), static_cast<double>(kMaxCallsPerTrial)));
      hold_s *= static_cast<double>(more) / calls;
      calls = more;
      per_call.clear();
      t = -1;
      continue;
    }
    resized = true;
    per_call.push_back(measured->gpu_s / calls);
  }
  return finish(median(per_call));
}

}  // namespace plansight::probe::cuda
