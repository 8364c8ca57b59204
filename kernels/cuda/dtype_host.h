// cuBLASLt/CUDA library type of a DType; host code only (gemm.cpp, the calibration sweep).
#pragma once

#include <library_types.h>

#include "plansight/kernels/cuda/dtypes.h"

namespace plansight::kernels::cuda::detail {

inline cudaDataType_t cuda_type_of(DType t) {
  return t == DType::fp32 ? CUDA_R_32F : (t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F);
}

}  // namespace plansight::kernels::cuda::detail
