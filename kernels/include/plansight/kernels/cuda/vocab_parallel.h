// Vocabulary-parallel embedding and cross-entropy, CUDA (Megatron-LM's VocabParallelEmbedding and
// _VocabParallelCrossEntropy; Shoeybi et al. 2019, Sec. 3): a tensor-parallel rank holds rows
// [begin, begin + rows) of the word embedding, so the lookup and the softmax are completed by TP
// collectives between these kernels and the full logits are never gathered. The CPU twins are the
// loops of the probe's CPU backend (probe/src/cpu_backend.cpp), which tests/device checks them
// against. Activations and embedding tables are fp32, bf16 or fp16 (`type`, given as a value
// because the probe's backend holds it as one); gradients, maxima and sums are fp32; math is
// fp32 with one rounding on store. Plain C++ may include this header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// out[n,:] = wte[tokens[n] - begin, :] when begin <= tokens[n] < begin + rows, else 0.
Status embedding_lookup(void* out, const std::int32_t* tokens, const void* wte, int begin, int rows, int N, int C,
                        DType type, cudaStream_t stream);
// out[n,:] += wpe[n mod T, :].
Status add_positions(void* out, const void* wpe, int N, int T, int C, DType type, cudaStream_t stream);
// dwpe[n mod T,:] += dout[n,:]; dwte[tokens[n] - begin,:] += dout[n,:] for this rank's tokens
// (fp32, atomicAdd: the order of the additions, and so the last bits, may vary between runs).
Status embedding_backward(float* dwte, float* dwpe, const void* dout, const std::int32_t* tokens, int begin, int rows,
                          int N, int T, int C, DType type, cudaStream_t stream);

// maxima[n] = max over the first `valid` of the Vl columns of logits[n,:] (-inf when valid = 0).
Status ce_row_max(float* maxima, const void* logits, int N, int Vl, int valid, DType type, cudaStream_t stream);
// With m[n] = max over the tp gathered maxima [tp, N]: sums[n] = sum_{v < valid} exp(logits[n,v] - m[n]),
// sums[N + n] = logits[n, t] - m[n] for t = targets[n] - begin when 0 <= t < valid, else 0.
// The logits are left as they are.
Status ce_sums(float* sums, const float* maxima, int tp, const void* logits, const std::int32_t* targets, int begin,
               int N, int Vl, int valid, DType type, cudaStream_t stream);
// In place: probs[n,v] = exp(logits[n,v] - m[n]) / sums[n] for v < valid, 0 for padding columns,
// from the all-reduced sums; and *loss += (1/N) sum_n (log sums[n] - sums[N + n]) in fp64, by one
// block in a fixed order (deterministic).
Status ce_normalize(void* logits, const float* sums, const float* maxima, int tp, int N, int Vl, int valid,
                    double* loss, DType type, cudaStream_t stream);
// In place: d = (probs - onehot(targets[n] - begin)) * scale over [N, Vl].
Status ce_backward(void* probs, const std::int32_t* targets, int begin, int N, int Vl, float scale, DType type,
                   cudaStream_t stream);

// out[n,c] += base[n,c] + bias[c] (bias may be null): the residual add after a row-parallel GEMM,
// with its bias added once after the TP all-reduce, fused into one pass.
Status residual_bias(void* out, const void* base, const void* bias, int N, int C, DType type, cudaStream_t stream);
// dst[i] += src[i], fp32 (a reduce-scattered gradient shard into its accumulator).
Status add_f32(float* dst, const float* src, std::size_t n, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
