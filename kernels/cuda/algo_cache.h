// Private to the cuBLASLt wrapper (gemm.cpp, blas.cpp): everything one Blas has prepared for each
// GEMM description it has run — the matmul descriptor, the three matrix layouts and the
// algorithm cuBLASLt's heuristic chose. Asking the heuristic costs more host time than launching
// the GEMM, and building the descriptor and layouts (five heap objects and a dozen attribute
// calls) costs about as much as the launch again: the probe's virtual ranks enqueue GEMMs of a few
// microseconds each (TP-split GPT-2 shapes run 8-10 us on an H200), so a host that spends longer
// per call than the GPU leaves the GPU idle. Everything here depends only on what the key holds,
// so it is built once per description; a call then only sets the bias and GeLU-argument pointers.
#pragma once

#include <cublasLt.h>

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace plansight::kernels::cuda::detail {

struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
};
struct LayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublasLtMatrixLayoutDestroy(l); }
};
struct PreferenceDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using Desc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDeleter>;

// Everything the descriptor, the layouts and cublasLtMatmulAlgoGetHeuristic are given that may
// change between calls of one Blas (its handle and workspace do not): shapes, leading dimensions,
// batch and strides, transposes, types, compute type, epilogue and the operands' alignments, the
// bias's and the GeLU argument's among them (cublasLt.h on BIAS_POINTER and EPILOGUE_AUX_POINTER:
// the heuristic reads their values for the alignment it may assume).
using AlgoKey = std::array<std::int64_t, 21>;

struct AlgoKeyHash {
  std::size_t operator()(const AlgoKey& key) const {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the words (Fowler, Noll, Vo)
    for (const std::int64_t x : key) h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h);
  }
};

// One description's prepared call. The descriptor's pointer attributes (bias, GeLU argument) are
// set by each call before cublasLtMatmul, which reads them when it enqueues: one Blas serves one
// stream of one thread (blas.h), so no other call sees them in between.
struct GemmPlan {
  Desc desc;
  Layout first, second, out;  // cuBLASLt's operands: our B, our A, and C (gemm.cpp)
  cublasLtMatmulAlgo_t algo{};
};

struct AlgoCache {
  // A run's GEMMs have a few dozen descriptions; a bound keeps a long-lived Blas (calibration
  // sweeping shapes) from growing without end.
  static constexpr std::size_t kMaxEntries = 4096;
  std::unordered_map<AlgoKey, GemmPlan, AlgoKeyHash> algorithms;
};

}  // namespace plansight::kernels::cuda::detail
