// Status from a CUDA runtime or cuBLAS(Lt) return value, naming the call; plain C++ (the host
// parts of the twins, blas.cpp and gemm.cpp, are compiled by the C++ compiler).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda::detail {

inline Status cuda_status(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return {};
  cudaGetLastError();  // clear a non-sticky error so the next launch does not report it
  return Status(static_cast<int>(error),
                std::string(call) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
}

inline Status cublas_status(cublasStatus_t status, const std::string& call) {
  if (status == CUBLAS_STATUS_SUCCESS) return {};
  return Status(static_cast<int>(status),
                call + ": " + cublasLtGetStatusName(status) + " (" + cublasLtGetStatusString(status) + ")");
}

// An argument error found before any call (code cudaErrorInvalidValue).
inline Status invalid_argument(const std::string& message) {
  return Status(static_cast<int>(cudaErrorInvalidValue), message);
}

}  // namespace plansight::kernels::cuda::detail
