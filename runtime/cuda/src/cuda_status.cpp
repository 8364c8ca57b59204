// cuda_failure (cuda_status.h).
#include "cuda_status.h"

namespace plansight::runtime::cuda {

Diagnostic cuda_failure(cudaError_t error, std::string_view call) {
  cudaGetLastError();
  return make_error("cuda", std::string(call) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
}

}  // namespace plansight::runtime::cuda
