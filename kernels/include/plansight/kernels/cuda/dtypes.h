// Element types of the CUDA twins. Every twin takes fp32, bf16 or fp16 activations (overloads on
// the pointer type); parameter gradients, optimizer moments and master weights stay fp32, as in
// mixed-precision training (Micikevicius et al. 2018, "Mixed Precision Training", §3.1: an fp32
// master copy of the weights; Megatron-LM keeps fp32 `main_grad` buffers for the same reason).
// Plain C++ may include this: the 16-bit types are only forward-declared here (cuda_fp16.h and
// cuda_bf16.h declare them the same way, so both may be included together).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

struct __half;
struct __nv_bfloat16;

namespace plansight::kernels::cuda {

using float16 = __half;
using bfloat16 = __nv_bfloat16;

// What a buffer holds; the GEMM wrapper and the calibration use it to pick cuBLASLt types.
enum class DType : std::uint8_t { fp32, bf16, fp16 };

constexpr std::string_view to_string(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
  }
  return "?";
}

constexpr std::size_t size_of(DType t) { return t == DType::fp32 ? 4 : 2; }

}  // namespace plansight::kernels::cuda
