// The CUDA backend of a probe rank (backend.h): device memory from the stream-ordered pool
// (cudaMallocAsync/cudaFreeAsync: a caching allocator with no cudaFree on the hot path, which
// would synchronise the device), the CUDA twins of the CPU kernels on the rank's compute stream
// with its own cuBLASLt handle, and a second stream for the data-parallel gradient thread,
// ordered with events. One host synchronisation per step: the loss read at its end.
#pragma once

#include <memory>

#include "backend.h"
#include "plansight/kernels/cuda/blas.h"
#include "plansight/kernels/cuda/dtypes.h"

namespace plansight::probe::cuda {

// What the ranks compute in: fp32 with strict fp32 GEMMs, fp32 storage with TF32 tensor-core
// GEMMs, or bf16/fp16 activations and compute weights (mixed precision).
struct CudaPrecision {
  Elem act = Elem::f32;
  kernels::cuda::Fp32Math fp32_math = kernels::cuda::Fp32Math::strict;
};

// A backend on `device` for the calling thread (which it makes current). Errors name the CUDA
// call that failed.
Result<std::unique_ptr<Backend>> make_cuda_backend(int device, const CudaPrecision& precision);

// The streams of a backend made by make_cuda_backend (the device communicators enqueue on them).
cudaStream_t compute_stream(Backend& backend);
cudaStream_t gradient_stream(Backend& backend);

}  // namespace plansight::probe::cuda
