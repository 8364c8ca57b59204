// current_context(): cuCtxGetCurrent from the driver's entry point table.
#include "driver_context.h"

#include <cuda_runtime.h>

#include "cuda_status.h"

namespace plansight::runtime::cuda {

Result<CUcontext> current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  // The ABI of CUDA 12.0 (cuCtxGetCurrent has not changed since CUDA 4.0).
  if (auto s = cuda_check(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found),
                          "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
      !s) {
    return s.errors();
  }
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) return make_error("cuda", "cuCtxGetCurrent not found in the driver");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCurrent>(fn)(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
    return make_error("cuda", "cuCtxGetCurrent returned no context");
  }
  return ctx;
}

}  // namespace plansight::runtime::cuda
