// Vocabulary-parallel embedding and cross-entropy, and the fused residual + bias, CUDA. Element-
// wise kernels are grid-stride loops; the cross-entropy's row kernels use one block per token row
// (max and sum as block reductions, as softmax_crossentropy.cu). The loss is summed over rows by
// one block in fp64 so it is the same from run to run. The cross-entropy backward runs over rows
// (blockIdx.y) and 16-byte packs within a row (blockIdx.x), so no element needs an index division.
#include "plansight/kernels/cuda/vocab_parallel.h"

#include <type_traits>

#include "common.cuh"
#include "dtype.cuh"
#include "vec.cuh"

namespace plansight::kernels::cuda {
namespace {

using detail::from_float;
using detail::to_float;

#define PLANSIGHT_GRID_STRIDE(i, n)                                                                        \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

template <class T>
__global__ void embedding_lookup_kernel(T* out, const std::int32_t* tokens, const T* wte, int begin, int rows, int C,
                                        std::size_t total) {
  PLANSIGHT_GRID_STRIDE(i, total) {
    const std::size_t n = i / C, c = i % C;
    const int row = tokens[n] - begin;
    out[i] = row >= 0 && row < rows ? wte[static_cast<std::size_t>(row) * C + c] : from_float<T>(0.0f);
  }
}

template <class T>
__global__ void add_positions_kernel(T* out, const T* wpe, int T_len, int C, std::size_t total) {
  PLANSIGHT_GRID_STRIDE(i, total) {
    const std::size_t n = i / C, c = i % C;
    out[i] = from_float<T>(to_float(out[i]) + to_float(wpe[(n % T_len) * C + c]));
  }
}

template <class T>
__global__ void embedding_backward_kernel(float* dwte, float* dwpe, const T* dout, const std::int32_t* tokens,
                                          int begin, int rows, int T_len, int C, std::size_t total) {
  PLANSIGHT_GRID_STRIDE(i, total) {
    const std::size_t n = i / C, c = i % C;
    const float g = to_float(dout[i]);
    atomicAdd(dwpe + (n % T_len) * C + c, g);
    const int row = tokens[n] - begin;
    if (row >= 0 && row < rows) atomicAdd(dwte + static_cast<std::size_t>(row) * C + c, g);
  }
}

template <class T>
__global__ void ce_row_max_kernel(float* maxima, const T* logits, int Vl, int valid) {
  __shared__ float scratch[32];
  const T* z = logits + static_cast<std::size_t>(blockIdx.x) * Vl;
  float m = -INFINITY;
  for (int v = threadIdx.x; v < valid; v += blockDim.x) m = fmaxf(m, to_float(z[v]));
  m = detail::block_max(m, scratch);
  if (threadIdx.x == 0) maxima[blockIdx.x] = m;
}

// The maximum of a row over the tp ranks' gathered maxima [tp, N].
__device__ inline float global_max(const float* maxima, int tp, int N, int n) {
  float m = -INFINITY;
  for (int t = 0; t < tp; ++t) m = fmaxf(m, maxima[static_cast<std::size_t>(t) * N + n]);
  return m;
}

template <class T>
__global__ void ce_sums_kernel(float* sums, const float* maxima, int tp, const T* logits, const std::int32_t* targets,
                               int begin, int N, int Vl, int valid) {
  __shared__ float scratch[32];
  const int n = blockIdx.x;
  const T* z = logits + static_cast<std::size_t>(n) * Vl;
  const float m = global_max(maxima, tp, N, n);
  float s = 0.0f;
  for (int v = threadIdx.x; v < valid; v += blockDim.x) s += expf(to_float(z[v]) - m);
  s = detail::block_sum(s, scratch);
  if (threadIdx.x == 0) {
    const int t = targets[n] - begin;
    sums[n] = s;
    sums[N + n] = t >= 0 && t < valid ? to_float(z[t]) - m : 0.0f;
  }
}

template <class T>
__global__ void ce_normalize_kernel(T* logits, const float* sums, const float* maxima, int tp, int N, int Vl,
                                    int valid) {
  const int n = blockIdx.x;
  T* z = logits + static_cast<std::size_t>(n) * Vl;
  const float m = global_max(maxima, tp, N, n);
  const float inv = 1.0f / sums[n];
  for (int v = threadIdx.x; v < Vl; v += blockDim.x) {
    z[v] = from_float<T>(v < valid ? expf(to_float(z[v]) - m) * inv : 0.0f);
  }
}

constexpr int kLossThreads = 256;

__global__ void ce_loss_kernel(double* loss, const float* sums, int N) {
  __shared__ double part[kLossThreads];
  double s = 0.0;
  for (int n = threadIdx.x; n < N; n += kLossThreads) s += log(static_cast<double>(sums[n])) - sums[N + n];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int stride = kLossThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss += part[0] / N;
}

// probs[n, v] = (probs[n, v] - [v == targets[n] - begin]) * scale, rows n = blockIdx.y, + gridDim.y,
// ...; packs of kWidth columns (Vl % kWidth == 0, rows kWidth-aligned) across blockIdx.x.
template <class T, int kWidth>
__global__ void ce_backward_kernel(T* probs, const std::int32_t* targets, int begin, int N, int Vl, float scale) {
  const int packs = Vl / kWidth;
  for (int n = blockIdx.y; n < N; n += gridDim.y) {
    T* p = probs + static_cast<std::size_t>(n) * Vl;
    const std::int64_t target = static_cast<std::int64_t>(targets[n]) - begin;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < packs; j += gridDim.x * blockDim.x) {
      float d[kWidth];
      detail::load_pack(d, p + static_cast<std::size_t>(j) * kWidth);
#pragma unroll
      for (int i = 0; i < kWidth; ++i) {
        if (static_cast<std::int64_t>(j) * kWidth + i == target) d[i] -= 1.0f;
        d[i] *= scale;
      }
      detail::store_pack(p + static_cast<std::size_t>(j) * kWidth, d);
    }
  }
}

template <class T>
__global__ void residual_bias_kernel(T* out, const T* base, const T* bias, int C, std::size_t total) {
  PLANSIGHT_GRID_STRIDE(i, total) {
    const float b = bias ? to_float(bias[i % C]) : 0.0f;
    out[i] = from_float<T>(to_float(out[i]) + (to_float(base[i]) + b));
  }
}

__global__ void add_f32_kernel(float* dst, const float* src, std::size_t n) {
  PLANSIGHT_GRID_STRIDE(i, n) { dst[i] += src[i]; }
}

#undef PLANSIGHT_GRID_STRIDE

// Calls f with a null pointer of the element type `type` names.
template <class F>
Status with_type(DType type, F&& f) {
  switch (type) {
    case DType::fp32: return f(static_cast<float*>(nullptr));
    case DType::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
    case DType::fp16: return f(static_cast<__half*>(nullptr));
  }
  return Status(static_cast<int>(cudaErrorInvalidValue), "vocab_parallel: unknown element type");
}

std::size_t elements(int N, int C) { return static_cast<std::size_t>(N) * static_cast<std::size_t>(C); }
unsigned int rows_grid(int N) { return static_cast<unsigned int>(N > 0 ? N : 1); }

}  // namespace

Status embedding_lookup(void* out, const std::int32_t* tokens, const void* wte, int begin, int rows, int N, int C,
                        DType type, cudaStream_t stream) {
  return with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::size_t total = elements(N, C);
    embedding_lookup_kernel<T><<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(
        static_cast<T*>(out), tokens, static_cast<const T*>(wte), begin, rows, C, total);
    return detail::launch_status("embedding_lookup_kernel");
  });
}

Status add_positions(void* out, const void* wpe, int N, int T_len, int C, DType type, cudaStream_t stream) {
  return with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::size_t total = elements(N, C);
    add_positions_kernel<T><<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(wpe), T_len, C, total);
    return detail::launch_status("add_positions_kernel");
  });
}

Status embedding_backward(float* dwte, float* dwpe, const void* dout, const std::int32_t* tokens, int begin, int rows,
                          int N, int T_len, int C, DType type, cudaStream_t stream) {
  return with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::size_t total = elements(N, C);
    embedding_backward_kernel<T><<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(
        dwte, dwpe, static_cast<const T*>(dout), tokens, begin, rows, T_len, C, total);
    return detail::launch_status("embedding_backward_kernel");
  });
}

Status ce_row_max(float* maxima, const void* logits, int N, int Vl, int valid, DType type, cudaStream_t stream) {
  if (N <= 0) return Status();  // no rows: nothing to write (a block would write row 0)
  return with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ce_row_max_kernel<T><<<rows_grid(N), detail::kBlockSize, 0, stream>>>(maxima, static_cast<const T*>(logits), Vl, valid);
    return detail::launch_status("ce_row_max_kernel");
  });
}

Status ce_sums(float* sums, const float* maxima, int tp, const void* logits, const std::int32_t* targets, int begin,
               int N, int Vl, int valid, DType type, cudaStream_t stream) {
  if (N <= 0) return Status();  // no rows: nothing to write (a block would write row 0)
  return with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ce_sums_kernel<T><<<rows_grid(N), detail::kBlockSize, 0, stream>>>(sums, maxima, tp, static_cast<const T*>(logits),
                                                                      targets, begin, N, Vl, valid);
    return detail::launch_status("ce_sums_kernel");
  });
}

Status ce_normalize(void* logits, const float* sums, const float* maxima, int tp, int N, int Vl, int valid,
                    double* loss, DType type, cudaStream_t stream) {
  if (N <= 0) return Status();  // no rows: nothing to write (a block would write row 0)
  Status s = with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ce_normalize_kernel<T><<<rows_grid(N), detail::kBlockSize, 0, stream>>>(static_cast<T*>(logits), sums, maxima, tp,
                                                                           N, Vl, valid);
    return detail::launch_status("ce_normalize_kernel");
  });
  if (!s) return s;
  ce_loss_kernel<<<1, kLossThreads, 0, stream>>>(loss, sums, N);
  return detail::launch_status("ce_loss_kernel");
}

Status ce_backward(void* probs, const std::int32_t* targets, int begin, int N, int Vl, float scale, DType type,
                   cudaStream_t stream) {
  if (N <= 0 || Vl <= 0) return Status();  // nothing to write; a grid of 0 blocks is a launch error
  return with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    auto launch = [&](auto width) {
      constexpr int W = decltype(width)::value;
      const int packs = Vl / W;
      // A row's packs across x (50,304 bf16 logits: 25 blocks of 256), rows across y (at most
      // 65,535, the grid's y limit; the kernel strides over the rest).
      const dim3 grid(static_cast<unsigned int>((packs + detail::kBlockSize - 1) / detail::kBlockSize),
                      static_cast<unsigned int>(N < 65535 ? N : 65535));
      ce_backward_kernel<T, W><<<grid, detail::kBlockSize, 0, stream>>>(static_cast<T*>(probs), targets, begin, N, Vl,
                                                                        scale);
      return detail::launch_status("ce_backward_kernel");
    };
    if (detail::rows_vectorisable<T>(Vl, static_cast<T*>(probs))) {
      return launch(std::integral_constant<int, detail::kVecWidth<T>>());
    }
    return launch(std::integral_constant<int, 1>());
  });
}

Status residual_bias(void* out, const void* base, const void* bias, int N, int C, DType type, cudaStream_t stream) {
  return with_type(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::size_t total = elements(N, C);
    residual_bias_kernel<T><<<detail::grid_for(total), detail::kBlockSize, 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(base), static_cast<const T*>(bias), C, total);
    return detail::launch_status("residual_bias_kernel");
  });
}

Status add_f32(float* dst, const float* src, std::size_t n, cudaStream_t stream) {
  add_f32_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(dst, src, n);
  return detail::launch_status("add_f32_kernel");
}

}  // namespace plansight::kernels::cuda
