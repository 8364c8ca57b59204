// Blas: owns a cuBLASLt handle and its device workspace (see blas.h).
#include "plansight/kernels/cuda/blas.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "algo_cache.h"
#include "library_status.h"

namespace plansight::kernels::cuda {

Blas::Blas() : algorithms_(std::make_unique<detail::AlgoCache>()) {}

std::size_t Blas::cached_algorithms() const { return algorithms_->algorithms.size(); }

Status Blas::create(std::unique_ptr<Blas>& out, Fp32Math math, std::size_t workspace_bytes) {
  std::unique_ptr<Blas> blas(new Blas());
  blas->math_ = math;
  cublasLtHandle_t handle = nullptr;
  if (Status s = detail::cublas_status(cublasLtCreate(&handle), "cublasLtCreate"); !s) return s;
  blas->handle_ = handle;
  if (workspace_bytes > 0) {
    const std::string call = "cudaMalloc (cuBLASLt workspace of " + std::to_string(workspace_bytes) + " bytes)";
    if (Status s = detail::cuda_status(cudaMalloc(&blas->workspace_, workspace_bytes), call.c_str()); !s) return s;
    blas->workspace_bytes_ = workspace_bytes;
  }
  out = std::move(blas);
  return {};
}

Blas::~Blas() {
  // Errors on release are not reportable from a destructor; the handle and memory are gone either way.
  if (workspace_ != nullptr) cudaFree(workspace_);
  if (handle_ != nullptr) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

}  // namespace plansight::kernels::cuda
