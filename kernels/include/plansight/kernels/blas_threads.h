// How many threads OpenBLAS may use inside one GEMM call of the CPU kernels.
// The setting is process-wide (OpenBLAS keeps one pool), so the probe sets it once, before it
// starts its rank threads: set_blas_threads(1) gives each rank exactly one core's worth of GEMM.
#pragma once

namespace plansight::kernels::cpu {

// Sets OpenBLAS's thread count for all later calls from any thread; values < 1 are taken as 1.
// Not meant to be called while other threads are inside a kernel.
void set_blas_threads(int threads);

// The thread count OpenBLAS uses now (its default is the core count or OPENBLAS_NUM_THREADS).
int blas_threads();

}  // namespace plansight::kernels::cpu
