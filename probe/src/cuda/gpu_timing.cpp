// seconds_per_call and median (gpu_timing.h).
#include "gpu_timing.h"

#include <algorithm>
#include <cmath>

namespace plansight::probe::cuda {

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
                                double min_trial_s) {
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
  // One trial of `calls` calls back to back: its seconds between the two events.
  auto trial = [&](int calls) -> Result<double> {
    if (auto s = cuda_ok(cudaEventRecord(begin, stream), "cudaEventRecord"); !s) return s.errors();
    for (int i = 0; i < calls; ++i) {
      if (std::string e = call(); !e.empty()) return make_error("calibration", e);
    }
    if (auto s = cuda_ok(cudaEventRecord(end, stream), "cudaEventRecord"); !s) return s.errors();
    if (auto s = cuda_ok(cudaEventSynchronize(end), "cudaEventSynchronize"); !s) return s.errors();
    float ms = 0;
    if (auto s = cuda_ok(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime"); !s) return s.errors();
    return static_cast<double>(ms) * 1e-3;
  };
  if (std::string e = call(); !e.empty()) return finish(make_error("calibration", e));
  int calls = std::max(reps, 1);
  // A sizing trial, which also warms the GPU up: too short a trial is lengthened to min_trial_s.
  auto sizing = trial(calls);
  if (!sizing) return finish(sizing.errors());
  if (*sizing < min_trial_s) {
    const double wanted = static_cast<double>(calls) * min_trial_s / std::max(*sizing, 1e-9);
    calls = static_cast<int>(std::min(std::ceil(wanted), static_cast<double>(kMaxCallsPerTrial)));
  }
  std::vector<double> per_call;
  for (int t = 0; t < std::max(trials, 1); ++t) {
    auto seconds = trial(calls);
    if (!seconds) return finish(seconds.errors());
    per_call.push_back(*seconds / calls);
  }
  return finish(median(per_call));
}

}  // namespace plansight::probe::cuda
