// Private to the cuBLASLt wrapper (gemm.cpp, blas.cpp): the algorithm cuBLASLt's heuristic chose
// for each GEMM description one Blas has run. Asking the heuristic costs more host time than
// launching the GEMM (the probe's attention runs 6 x B batched GEMMs per layer per micro-batch),
// and its answer depends only on what the key holds, so it is asked once per description.
#pragma once

#include <cublasLt.h>

#include <array>
#include <cstdint>
#include <unordered_map>

namespace plansight::kernels::cuda::detail {

// Everything cublasLtMatmulAlgoGetHeuristic is given that may change between calls of one Blas
// (its handle and workspace do not): shapes, leading dimensions, batch and strides, transposes,
// types, compute type, epilogue and the operands' alignments, the bias's and the GeLU
// argument's among them (cublasLt.h on BIAS_POINTER and EPILOGUE_AUX_POINTER: the heuristic
// reads their values for the alignment it may assume).
using AlgoKey = std::array<std::int64_t, 21>;

struct AlgoKeyHash {
  std::size_t operator()(const AlgoKey& key) const {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the words (Fowler, Noll, Vo)
    for (const std::int64_t x : key) h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h);
  }
};

struct AlgoCache {
  // A run's GEMMs have a few dozen descriptions; a bound keeps a long-lived Blas (calibration
  // sweeping shapes) from growing without end.
  static constexpr std::size_t kMaxEntries = 4096;
  std::unordered_map<AlgoKey, cublasLtMatmulAlgo_t, AlgoKeyHash> algorithms;
};

}  // namespace plansight::kernels::cuda::detail
