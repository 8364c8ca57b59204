// Row-major GEMM on cuBLASLt (column-major). A row-major [r, c] matrix with leading dimension ld
// is the column-major [c, r] matrix with the same ld, so row-major C = op(A) op(B) is computed
// as column-major C^T = op(B)^T op(A)^T: cuBLASLt's first operand is our B, its second our A,
// and its output has m' = n rows and n' = m columns. The bias epilogue adds a vector of the
// output's column-major rows (m' = n), i.e. one value per row-major column, as nn.Linear's bias.
// Alignment: cuBLASLt's heuristic assumes 256-byte aligned pointers unless told otherwise
// (cublasLt.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES); attention reads heads at offsets of
// hs elements, so each operand's real alignment (base and batch stride) is passed in.
#include "gemm.h"

#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dtype_host.h"
#include "algo_cache.h"
#include "library_status.h"

namespace plansight::kernels::cuda::detail {
namespace {

// Largest power of two (<= 256) dividing the address of every batch's matrix: the base address
// and, when batched, the stride in bytes (heads hs elements apart are less aligned than the base).
std::uint32_t alignment_of(const void* p, int batch, std::int64_t stride, DType type) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  const auto stride_bytes = static_cast<std::uintptr_t>(stride) * size_of(type);
  std::uint32_t alignment = 256;
  while (alignment > 1 && (address % alignment != 0 || (batch > 1 && stride_bytes % alignment != 0))) alignment /= 2;
  return alignment;
}

std::string describe(const Gemm& g) {
  return std::string(g.what) + " (m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) + " k=" +
         std::to_string(g.k) + " batch=" + std::to_string(g.batch) + ", " + std::string(to_string(g.ab_type)) +
         " -> " + std::string(to_string(g.c_type)) + ")";
}

Status validate(const Gemm& g) {
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.batch < 1) {
    return invalid_argument(describe(g) + ": every size must be >= 1");
  }
  const int min_lda = g.trans_a ? g.m : g.k, min_ldb = g.trans_b ? g.k : g.n;
  if (g.lda < min_lda || g.ldb < min_ldb || g.ldc < g.n) {
    return invalid_argument(describe(g) + ": leading dimensions lda=" + std::to_string(g.lda) + " ldb=" +
                            std::to_string(g.ldb) + " ldc=" + std::to_string(g.ldc) + " must be >= " +
                            std::to_string(min_lda) + ", " + std::to_string(min_ldb) + ", " + std::to_string(g.n));
  }
  if (g.gelu_pre != nullptr && (g.bias == nullptr || !gelu_epilogue_supports(g.ldc))) {
    return invalid_argument(describe(g) + ": the bias+GeLU epilogue needs a bias and ldc divisible by 8, got ldc=" +
                            std::to_string(g.ldc));
  }
  if ((g.bias != nullptr || g.gelu_pre != nullptr) && g.c_type != g.ab_type) {
    return invalid_argument(describe(g) + ": epilogues need C of the same type as A and B");
  }
  return {};
}

// Column-major layout of `rows` x `cols` with leading dimension ld, batched with `stride`.
Status make_layout(Layout& out, cudaDataType_t type, int rows, int cols, int ld, int batch, std::int64_t stride,
                   const std::string& what) {
  cublasLtMatrixLayout_t layout = nullptr;
  if (Status s = cublas_status(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                                          static_cast<std::uint64_t>(cols), ld),
                               "cublasLtMatrixLayoutCreate for " + what);
      !s) {
    return s;
  }
  out.reset(layout);
  if (batch > 1) {
    const std::int32_t count = batch;
    if (Status s = cublas_status(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                                  sizeof(count)),
                                 "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT) for " + what);
        !s) {
      return s;
    }
    if (Status s = cublas_status(cublasLtMatrixLayoutSetAttribute(
                                     layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
                                 "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET) for " + what);
        !s) {
      return s;
    }
  }
  return {};
}

template <class V>
Status set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const V& value,
                const char* name, const std::string& what) {
  return cublas_status(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)),
                       std::string("cublasLtMatmulDescSetAttribute(") + name + ") for " + what);
}

template <class V>
Status set_preference(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attribute,
                      const V& value, const char* name, const std::string& what) {
  return cublas_status(cublasLtMatmulPreferenceSetAttribute(pref, attribute, &value, sizeof(value)),
                       std::string("cublasLtMatmulPreferenceSetAttribute(") + name + ") for " + what);
}

cublasComputeType_t compute_type_of(const Gemm& g, Fp32Math math) {
  if (g.ab_type == DType::fp32 && math == Fp32Math::tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

// The descriptor, layouts and algorithm of `g` (whose epilogue and operand alignments the caller
// has worked out, as the cache key holds them), built once per description (algo_cache.h).
Status prepare(Blas& blas, const Gemm& g, cublasLtEpilogue_t epilogue, std::uint32_t align_first,
               std::uint32_t align_second, std::uint32_t align_c, GemmPlan& plan) {
  const std::string what = describe(g);
  const cudaDataType_t ab = cuda_type_of(g.ab_type), c_type = cuda_type_of(g.c_type);
  cublasLtMatmulDesc_t raw_desc = nullptr;
  if (Status s = cublas_status(cublasLtMatmulDescCreate(&raw_desc, compute_type_of(g, blas.fp32_math()), CUDA_R_32F),
                               "cublasLtMatmulDescCreate for " + what);
      !s) {
    return s;
  }
  plan.desc.reset(raw_desc);
  // Column-major: first operand = our B (op kept as its transpose flag), second = our A.
  const cublasOperation_t op_first = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (Status s = set_desc(raw_desc, CUBLASLT_MATMUL_DESC_TRANSA, op_first, "TRANSA", what); !s) return s;
  if (Status s = set_desc(raw_desc, CUBLASLT_MATMUL_DESC_TRANSB, op_second, "TRANSB", what); !s) return s;
  if (g.bias != nullptr) {
    // The pointer itself is set by every call (gemm below); the heuristic is asked with this one.
    if (Status s = set_desc(raw_desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias, "BIAS_POINTER", what); !s) return s;
    if (Status s = set_desc(raw_desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, ab, "BIAS_DATA_TYPE", what); !s) return s;
  }
  if (g.gelu_pre != nullptr) {
    const std::int64_t aux_ld = g.ldc;
    if (Status s = set_desc(raw_desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, g.gelu_pre, "EPILOGUE_AUX_POINTER", what);
        !s) {
      return s;
    }
    if (Status s = set_desc(raw_desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld, "EPILOGUE_AUX_LD", what); !s) {
      return s;
    }
    // EPILOGUE_AUX_DATA_TYPE stays unset: its default is the output's type, which pre_gelu has,
    // and cublasLt.h warns that setting it for a combination it does not support makes
    // cublasLtMatmul() fail with INVALID_VALUE (not NOT_SUPPORTED, which the caller falls back on).
  }
  if (Status s = set_desc(raw_desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, "EPILOGUE", what); !s) return s;

  // Column-major shapes: first operand op(.) is [n, k], second [k, m], output [n, m].
  if (Status s = make_layout(plan.first, ab, g.trans_b ? g.k : g.n, g.trans_b ? g.n : g.k, g.ldb, g.batch, g.stride_b,
                             what + " B");
      !s) {
    return s;
  }
  if (Status s = make_layout(plan.second, ab, g.trans_a ? g.m : g.k, g.trans_a ? g.k : g.m, g.lda, g.batch, g.stride_a,
                             what + " A");
      !s) {
    return s;
  }
  if (Status s = make_layout(plan.out, c_type, g.n, g.m, g.ldc, g.batch, g.stride_c, what + " C"); !s) return s;

  cublasLtMatmulPreference_t raw_pref = nullptr;
  if (Status s = cublas_status(cublasLtMatmulPreferenceCreate(&raw_pref), "cublasLtMatmulPreferenceCreate for " + what);
      !s) {
    return s;
  }
  Preference pref(raw_pref);
  const std::uint64_t workspace = blas.workspace_bytes();
  if (Status s = set_preference(raw_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace, "MAX_WORKSPACE_BYTES", what);
      !s) {
    return s;
  }
  if (Status s = set_preference(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_first, "MIN_ALIGNMENT_A", what);
      !s) {
    return s;
  }
  if (Status s = set_preference(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_second, "MIN_ALIGNMENT_B", what);
      !s) {
    return s;
  }
  if (Status s = set_preference(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c, "MIN_ALIGNMENT_C", what);
      !s) {
    return s;
  }
  if (Status s = set_preference(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c, "MIN_ALIGNMENT_D", what);
      !s) {
    return s;
  }
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  if (Status s = cublas_status(cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(blas.handle()), raw_desc,
                                                              plan.first.get(), plan.second.get(), plan.out.get(),
                                                              plan.out.get(), raw_pref, 1, &heuristic, &found),
                               "cublasLtMatmulAlgoGetHeuristic for " + what);
      !s) {
    return s;
  }
  if (found == 0) {
    return Status(static_cast<int>(CUBLAS_STATUS_NOT_SUPPORTED),
                  "cublasLtMatmulAlgoGetHeuristic for " + what + ": no algorithm for these types, shapes and alignments");
  }
  plan.algo = heuristic.algo;
  return {};
}

// A per-call attribute of a prepared descriptor; the message is built only on failure (this runs
// for every GEMM with a bias).
template <class V>
Status set_pointer(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const V& value,
                   const char* name, const Gemm& g) {
  const cublasStatus_t status = cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value));
  if (status == CUBLAS_STATUS_SUCCESS) return {};
  return cublas_status(status, std::string("cublasLtMatmulDescSetAttribute(") + name + ") for " + describe(g));
}

}  // namespace

Status gemm(Blas& blas, const Gemm& g, cudaStream_t stream) {
  if (Status s = validate(g); !s) return s;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (g.bias != nullptr) epilogue = g.gelu_pre != nullptr ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_BIAS;
  const std::uint32_t align_first = alignment_of(g.b, g.batch, g.stride_b, g.ab_type);
  const std::uint32_t align_second = alignment_of(g.a, g.batch, g.stride_a, g.ab_type);
  const std::uint32_t align_c = alignment_of(g.c, g.batch, g.stride_c, g.c_type);
  const std::uint32_t align_bias = g.bias != nullptr ? alignment_of(g.bias, 1, 0, g.ab_type) : 0;
  const std::uint32_t align_aux = g.gelu_pre != nullptr ? alignment_of(g.gelu_pre, 1, 0, g.c_type) : 0;
  const AlgoKey key = {g.m, g.n, g.k, g.batch, g.lda, g.ldb, g.ldc, g.stride_a, g.stride_b, g.stride_c,
                       g.trans_a, g.trans_b, static_cast<std::int64_t>(g.ab_type), static_cast<std::int64_t>(g.c_type),
                       static_cast<std::int64_t>(compute_type_of(g, blas.fp32_math())),
                       static_cast<std::int64_t>(epilogue), align_first, align_second, align_c, align_bias, align_aux};
  AlgoCache& cache = blas.algorithms();
  auto cached = cache.algorithms.find(key);
  if (cached == cache.algorithms.end()) {
    GemmPlan plan;
    if (Status s = prepare(blas, g, epilogue, align_first, align_second, align_c, plan); !s) return s;
    if (cache.algorithms.size() >= AlgoCache::kMaxEntries) cache.algorithms.clear();
    cached = cache.algorithms.emplace(key, std::move(plan)).first;
  }
  GemmPlan& plan = cached->second;
  cublasLtMatmulDesc_t desc = plan.desc.get();
  if (g.bias != nullptr) {
    if (Status s = set_pointer(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias, "BIAS_POINTER", g); !s) return s;
  }
  if (g.gelu_pre != nullptr) {
    if (Status s = set_pointer(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, g.gelu_pre, "EPILOGUE_AUX_POINTER", g); !s) {
      return s;
    }
  }
  const std::uint64_t workspace = blas.workspace_bytes();
  const cublasStatus_t status =
      cublasLtMatmul(static_cast<cublasLtHandle_t>(blas.handle()), desc, &g.alpha, g.b, plan.first.get(), g.a,
                     plan.second.get(), &g.beta, g.c, plan.out.get(), g.c, plan.out.get(), &plan.algo, blas.workspace(),
                     workspace, stream);
  if (status == CUBLAS_STATUS_SUCCESS) return {};
  return cublas_status(status, "cublasLtMatmul for " + describe(g));
}

}  // namespace plansight::kernels::cuda::detail
