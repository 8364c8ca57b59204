// CUDA runtime return values as runtime::Status errors that name the call, and kernels::cuda
// launcher statuses converted likewise. Never exits: libraries return errors (STYLE.md).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <string_view>

#include "plansight/kernels/cuda/status.h"
#include "plansight/runtime/communicator.h"

namespace plansight::runtime::cuda {

// "cudaMemcpyAsync (all_gather \"tp\"): cudaErrorInvalidValue (invalid argument)". Clears a
// non-sticky error so that it is not reported again by the next call.
Diagnostic cuda_failure(cudaError_t error, std::string_view call);

inline Status cuda_check(cudaError_t error, std::string_view call) {
  if (error == cudaSuccess) return ok_status();
  return cuda_failure(error, call);
}

inline Status kernel_check(const kernels::cuda::Status& status) {
  if (status.ok()) return ok_status();
  return make_error("cuda", status.message());
}

}  // namespace plansight::runtime::cuda
