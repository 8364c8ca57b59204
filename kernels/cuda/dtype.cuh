// Device-side conversions between the element types of dtypes.h and fp32. Every kernel loads
// its 16-bit inputs to fp32, computes in fp32 and rounds once on store (round to nearest even,
// the conversion intrinsics of cuda_bf16.h / cuda_fp16.h), as llm.c's floatX kernels do.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "dtype_host.h"
#include "plansight/kernels/cuda/dtypes.h"

namespace plansight::kernels::cuda::detail {

__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }

template <class T>
__host__ __device__ inline T from_float(float x);
template <>
__host__ __device__ inline float from_float<float>(float x) { return x; }
template <>
__host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <>
__host__ __device__ inline __half from_float<__half>(float x) { return __float2half(x); }

template <class T>
struct TypeInfo;
template <>
struct TypeInfo<float> {
  static constexpr cudaDataType_t kCuda = CUDA_R_32F;
  static constexpr DType kDType = DType::fp32;
};
template <>
struct TypeInfo<__nv_bfloat16> {
  static constexpr cudaDataType_t kCuda = CUDA_R_16BF;
  static constexpr DType kDType = DType::bf16;
};
template <>
struct TypeInfo<__half> {
  static constexpr cudaDataType_t kCuda = CUDA_R_16F;
  static constexpr DType kDType = DType::fp16;
};

}  // namespace plansight::kernels::cuda::detail
