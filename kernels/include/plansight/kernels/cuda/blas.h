// The cuBLASLt state one rank thread's GEMMs run with: a cuBLASLt handle, a device workspace and
// the fp32 math mode (strict fp32 or TF32 tensor cores). The CUDA twins of matmul and attention
// take it before the stream: cuBLASLt needs a handle and workspace that only one stream may use
// at a time, so each rank thread (each stream) owns one Blas. Plain C++ may include this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

namespace detail {
struct AlgoCache;  // algo_cache.h
}

// How GEMMs on fp32 data compute: strict fp32 (CUBLAS_COMPUTE_32F), or TF32 tensor cores with
// fp32 accumulation (CUBLAS_COMPUTE_32F_FAST_TF32; 10-bit mantissa products, NVIDIA A100 Tensor
// Core GPU Architecture whitepaper, "TF32"). GEMMs on bf16/fp16 data always accumulate in fp32.
enum class Fp32Math : std::uint8_t { strict, tf32 };

// 32 MiB: the workspace the cuBLAS documentation recommends for Hopper (cublasSetWorkspace();
// 4 MiB for earlier GPUs), so one size serves A100 and H100.
inline constexpr std::size_t kDefaultBlasWorkspaceBytes = std::size_t{32} << 20;

class Blas {
 public:
  // A cuBLASLt handle and a workspace of `workspace_bytes` on the current device. Errors name
  // the failing call (cublasLtCreate, cudaMalloc).
  static Status create(std::unique_ptr<Blas>& out, Fp32Math math = Fp32Math::strict,
                       std::size_t workspace_bytes = kDefaultBlasWorkspaceBytes);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  Fp32Math fp32_math() const { return math_; }
  void set_fp32_math(Fp32Math math) { math_ = math; }
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  void* workspace() const { return workspace_; }
  void* handle() const { return handle_; }  // a cublasLtHandle_t
  // The heuristic's choices for the GEMM descriptions run so far (gemm.cpp).
  detail::AlgoCache& algorithms() { return *algorithms_; }
  std::size_t cached_algorithms() const;

 private:
  Blas();
  std::unique_ptr<detail::AlgoCache> algorithms_;
  void* handle_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  Fp32Math math_ = Fp32Math::strict;
};

}  // namespace plansight::kernels::cuda
