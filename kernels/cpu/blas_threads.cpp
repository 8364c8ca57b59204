// OpenBLAS thread control for the CPU kernels. OpenBLAS's count is global to the process, so
// this file is the one place that touches it; the kernels themselves keep no state.
#include "plansight/kernels/blas_threads.h"

#include <cblas.h>

namespace plansight::kernels::cpu {

void set_blas_threads(int threads) { openblas_set_num_threads(threads < 1 ? 1 : threads); }

int blas_threads() { return openblas_get_num_threads(); }

}  // namespace plansight::kernels::cpu
