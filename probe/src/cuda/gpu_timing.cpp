// seconds_per_call and median (gpu_timing.h).
#include "gpu_timing.h"

#include <algorithm>

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

Result<double> seconds_per_call(cudaStream_t stream, int trials, int reps, const std::function<std::string()>& call) {
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
  if (std::string e = call(); !e.empty()) return finish(make_error("calibration", e));
  std::vector<double> per_call;
  for (int t = 0; t < std::max(trials, 1); ++t) {
    if (auto s = cuda_ok(cudaEventRecord(begin, stream), "cudaEventRecord"); !s) return finish(s.errors());
    for (int i = 0; i < std::max(reps, 1); ++i) {
      if (std::string e = call(); !e.empty()) return finish(make_error("calibration", e));
    }
    if (auto s = cuda_ok(cudaEventRecord(end, stream), "cudaEventRecord"); !s) return finish(s.errors());
    if (auto s = cuda_ok(cudaEventSynchronize(end), "cudaEventSynchronize"); !s) return finish(s.errors());
    float ms = 0;
    if (auto s = cuda_ok(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime"); !s) return finish(s.errors());
    per_call.push_back(static_cast<double>(ms) * 1e-3 / std::max(reps, 1));
  }
  return finish(median(per_call));
}

}  // namespace plansight::probe::cuda
