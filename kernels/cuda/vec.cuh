// 16-byte vector access for the memory-bound kernels. A Pack of kWidth elements (8 bf16/fp16 or
// 4 fp32) moves with one 128-bit load or store when its address is 16-byte aligned (CUDA C++
// Programming Guide, "Device Memory Accesses": naturally aligned 16-byte types are accessed with
// one instruction), as llm.c's Packed128 (llmc/cuda_utils.cuh). Kernels take the width as a
// template parameter; the launcher picks kVecWidth when every row length and pointer allows it,
// else width 1 or the kernel's scalar form. Values are widened to fp32 on load, rounded on store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common.cuh"
#include "dtype.cuh"

namespace plansight::kernels::cuda::detail {

template <class T>
inline constexpr int kVecWidth = 16 / static_cast<int>(sizeof(T));

template <class T, int kWidth>
struct alignas(sizeof(T) * kWidth) Pack {
  T v[kWidth];
};

// The kWidth elements at p, aligned to sizeof(T) * kWidth, as stored: kernels that keep a row in
// registers hold it so (half the registers of fp32 for 16-bit types) and widen on use.
template <int kWidth, class T>
__device__ inline Pack<T, kWidth> read_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, kWidth>*>(p);
}

// out[i] = p[i], i < kWidth; p aligned to sizeof(T) * kWidth.
template <int kWidth, class T>
__device__ inline void load_pack(float (&out)[kWidth], const T* p) {
  const Pack<T, kWidth> pack = read_pack<kWidth>(p);
#pragma unroll
  for (int i = 0; i < kWidth; ++i) out[i] = to_float(pack.v[i]);
}

// p[i] = in[i] rounded to T, i < kWidth; p aligned to sizeof(T) * kWidth.
template <int kWidth, class T>
__device__ inline void store_pack(T* p, const float (&in)[kWidth]) {
  Pack<T, kWidth> pack;
#pragma unroll
  for (int i = 0; i < kWidth; ++i) pack.v[i] = from_float<T>(in[i]);
  *reinterpret_cast<Pack<T, kWidth>*>(p) = pack;
}

// True when p (null counts as aligned: an absent optional operand) is 16-byte aligned.
inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <class... P>
bool all_aligned16(const P*... p) {
  return (aligned16(p) && ...);
}

// Rows of `row_length` elements of T starting at 16-byte aligned pointers stay aligned row after
// row when the length is a multiple of the pack width.
template <class T, class... P>
bool rows_vectorisable(int row_length, const P*... p) {
  return row_length % kVecWidth<T> == 0 && all_aligned16(p...);
}

// Row kernels that keep a row in registers (one warp per row, kChunks packs per lane) handle rows
// of up to 32 * kVecWidth * kMaxChunks elements: 2,048 in 16 bits, 1,024 in fp32. Longer rows take
// the kernel's scalar form.
inline constexpr int kMaxChunks = 8;

template <class T>
int chunks_for(int row_length) {
  const int per_chunk = 32 * kVecWidth<T>;
  return (row_length + per_chunk - 1) / per_chunk;
}

// Calls launch(std::integral_constant<int, K>()) with the smallest K of 1, 2, 4, 8 that is at
// least `chunks` (at most kMaxChunks), so only four register layouts are compiled per kernel.
template <class F>
Status with_chunks(int chunks, F&& launch) {
  if (chunks <= 1) return launch(std::integral_constant<int, 1>());
  if (chunks <= 2) return launch(std::integral_constant<int, 2>());
  if (chunks <= 4) return launch(std::integral_constant<int, 4>());
  return launch(std::integral_constant<int, 8>());
}

// Column strips (bias and LayerNorm parameter gradients): a block of kStripThreads sums a strip of
// kStripPacks 16-byte packs (2: one 32-byte DRAM sector per row) over all rows, its threads split
// into kStripThreads / kStripPacks row slices. Narrow strips give C / (2 kVecWidth) blocks (48 for
// C = 768 in bf16, 96 in fp32) instead of C / 32, so more SMs pull; the sums need no second
// kernel, no scratch and no atomics. On an H200, bf16, N = 8,192: one pack per row (twice the
// blocks, half-used sectors) was slower for OC = 2,304 and 3,072 (25 and 30 us against 13 and 21).
inline constexpr int kStripThreads = 512;
inline constexpr int kStripPacks = 2;
// Rows a strip thread loads before it sums them (4 x 16 bytes per operand in flight).
inline constexpr int kStripBatch = 4;

// Sums v over the row slices of a strip block, in a fixed order (shuffle butterfly within each
// warp, then the warps in index order), leaving the totals in threads 0..kPacks-1, thread p
// holding pack p's. Thread t holds pack t % kPacks. Every thread of the block must call it;
// `scratch` is shared memory, free again when it returns.
template <int kPacks, int kWidth>
__device__ inline void strip_sum(float (&v)[kWidth], float (*scratch)[kPacks][kWidth]) {
  static_assert(32 % kPacks == 0, "a warp holds whole row slices");
  constexpr int kWarps = kStripThreads / 32;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int i = 0; i < kWidth; ++i) {
    for (int offset = 16; offset >= kPacks; offset /= 2) v[i] += __shfl_xor_sync(0xffffffffu, v[i], offset);
  }
  if (lane < kPacks) {
#pragma unroll
    for (int i = 0; i < kWidth; ++i) scratch[warp][lane][i] = v[i];
  }
  __syncthreads();
  if (threadIdx.x < kPacks) {
#pragma unroll
    for (int i = 0; i < kWidth; ++i) {
      float sum = 0.0f;
      for (int w = 0; w < kWarps; ++w) sum += scratch[w][threadIdx.x][i];
      v[i] = sum;
    }
  }
  __syncthreads();
}

}  // namespace plansight::kernels::cuda::detail
