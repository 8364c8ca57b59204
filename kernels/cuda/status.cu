// Turns the CUDA runtime's error of the last launch into a Status that names the kernel.
#include "common.cuh"

#include <string>

namespace plansight::kernels::cuda::detail {

Status launch_status(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) return {};
  return Status(static_cast<int>(error), std::string(kernel) + ": " + cudaGetErrorName(error) +
                                             " (" + cudaGetErrorString(error) + ")");
}

}  // namespace plansight::kernels::cuda::detail
