// Backend: what one rank's training step runs on — its memory and its kernels. The rank code
// (transformer block, vocabulary-parallel embedding and head, parameter units, ZeRO, gradient
// sync, schedule executor) is written once against this interface; the CPU backend runs it
// with the CPU kernels on host memory, the CUDA backend (probe/src/cuda) with the CUDA twins on
// device memory and two streams. DESIGN.md §1: rank code never calls kernels::cpu directly.
//
// Conventions, the same on every backend:
// - Activations, their gradients and the weights the kernels read are in the backend's compute
//   element type (act(): fp32 on the CPU; fp32, bf16 or fp16 on a GPU). Parameter gradients,
//   master weights, optimizer moments, LayerNorm statistics and cross-entropy sums are fp32
//   (mixed precision, Micikevicius et al. 2018 §3.1; Megatron-LM's fp32 main_grad).
// - Backward kernels accumulate into their outputs (dinp, dweight, dbias), as the CPU kernels
//   and their CUDA twins do; callers zero what must start from zero, or have the first writer
//   of an input gradient overwrite it (kernels::Gradient::overwrite).
// - Work runs on one of two queues: the rank's compute queue (its main thread) or its gradient
//   queue (the data-parallel gradient thread, grad_sync.h). On the CPU both are the calling
//   thread and run at once; on a GPU they are streams, ordered with fence().
// - Failures (a kernel launch, an allocation that does not fit) throw RankFailure, which the
//   rank's thread turns into the run's error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "plansight/kernels/adamw.h"
#include "plansight/kernels/gradient_mode.h"
#include "plansight/runtime/communicator.h"
#include "plansight/runtime/memory_tracker.h"

namespace plansight::probe {

// Storage element types.
enum class Elem : std::uint8_t { f32, bf16, f16, i32 };
constexpr std::size_t elem_bytes(Elem e) { return e == Elem::bf16 || e == Elem::f16 ? 2 : 4; }
const char* to_string(Elem e);

enum class Queue : std::uint8_t { compute, grad };

// What a new array holds before its first write. `zeros` is the default and the safe choice;
// `none` is for an array whose every element the operation that first touches it writes before
// anything reads it (a GEMM with beta 0, a forward kernel's output, a copy, upload or receive of
// the whole array). It saves a fill per allocation, on a GPU a memset launch each: a GPT-2 124M
// bf16 step on an H200 (micro-batch 8 x 1024, CUPTI trace) went from 293 memsets of the probe's
// own to 90 (2.6 GB, 0.67 ms), all memset time from 2.9 ms to 0.9 ms.
// The CPU backend poisons `none` arrays (kUnsetPoisonByte), so a `none` on an array that is read
// or accumulated into first turns the CPU tests' losses into NaN. Arrays the backward kernels
// accumulate into (input and parameter gradients) stay `zeros`.
enum class Fill : std::uint8_t { zeros, none };

class Backend;

// An owned array of `count` elements in the backend's memory, counted in the rank's
// MemoryTracker under one category; zeroed when allocated unless `fill` is Fill::none. Move-only.
class Buf {
 public:
  Buf() = default;
  Buf(Backend& backend, runtime::MemoryCategory category, std::size_t count, Elem elem = Elem::f32,
      Fill fill = Fill::zeros);
  Buf(Buf&& other) noexcept;
  Buf& operator=(Buf&& other) noexcept;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf();

  void* data() const { return ptr_; }
  float* f32() const { return static_cast<float*>(ptr_); }  // for Elem::f32 buffers
  std::int32_t* i32() const { return static_cast<std::int32_t*>(ptr_); }
  // Element `i` of the array (pointer arithmetic in the buffer's element type).
  void* at(std::size_t i) const { return static_cast<char*>(ptr_) + i * elem_bytes(elem_); }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * elem_bytes(elem_); }
  Elem elem() const { return elem_; }
  bool empty() const { return count_ == 0; }
  runtime::MemoryCategory category() const { return category_; }
  void zero(Queue queue = Queue::compute);
  void reset();  // frees the array and releases its bytes
  // The same, the bytes going back to the allocator in `queue`'s order (Backend::release_in): for
  // a buffer last read by work on the gradient queue, freed from the compute thread.
  void reset(Queue queue);

 private:
  Backend* backend_ = nullptr;
  runtime::MemoryCategory category_ = runtime::MemoryCategory::buffers;
  std::size_t count_ = 0;
  Elem elem_ = Elem::f32;
  void* ptr_ = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu" or "cuda"; the compute element type.
  virtual const char* kind() const = 0;
  virtual Elem act() const = 0;
  runtime::MemoryTracker& memory() { return memory_; }

  // Memory. allocate() returns bytes counted under `category`, zeroed for Fill::zeros and
  // unspecified for Fill::none (poison on the CPU), or throws RankFailure ("does not fit: needed
  // X, free Y" on a GPU); the fill changes neither the accounting nor the bytes taken. release()
  // may be called from either queue's thread; on a GPU the bytes go back to the allocator in that
  // thread's queue order.
  virtual void* allocate(runtime::MemoryCategory category, std::size_t bytes, Fill fill) = 0;
  virtual void release(runtime::MemoryCategory category, void* ptr, std::size_t bytes) = 0;
  // release() in `queue`'s order whichever thread calls it: after the work enqueued on it so far
  // (the CPU's queues run as they are called, so this is release()).
  virtual void release_in(Queue queue, runtime::MemoryCategory category, void* ptr, std::size_t bytes) {
    (void)queue;
    release(category, ptr, bytes);
  }
  virtual void zero(void* ptr, std::size_t bytes, Queue queue) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes, Queue queue) = 0;
  virtual void upload(void* dst, const void* host, std::size_t bytes) = 0;    // compute queue
  virtual void download(void* host, const void* src, std::size_t bytes) = 0;  // waits for both queues
  // The first queue's work so far happens before the second queue's later work.
  virtual void fence(Queue from, Queue to) = 0;
  // Waits for everything enqueued (the one host synchronisation of a step on a GPU).
  virtual void synchronize() = 0;
  // Sums `n` <= 16 host floats over `comm` (a communicator of this backend's ranks) and returns
  // with the result on the host: the step's closing [loss, stop] exchange. A GPU goes through a
  // small device scratch of its own (runtime state like the GEMM workspace, not a model buffer).
  virtual runtime::Status all_reduce_host(runtime::Communicator& comm, float* values, std::size_t n) = 0;

  // Element conversions between fp32 and the compute type (n elements; same type: a copy).
  virtual void to_act(void* dst, const float* src, std::size_t n, Queue queue) = 0;
  virtual void to_f32(float* dst, const void* src, std::size_t n, Queue queue) = 0;
  // dst[i] += src[i], fp32 (a reduce-scattered gradient shard into its accumulator).
  virtual void add_f32(float* dst, const float* src, std::size_t n, Queue queue) = 0;

  // The decoder's kernels (kernels/*.h), on the compute queue. Pointers typed void* are in the
  // compute type; float* are fp32.
  virtual void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight,
                                 const void* bias, int N, int C) = 0;
  virtual void layernorm_backward(void* dinp, float* dweight, float* dbias, const void* dout, const void* inp,
                                  const void* weight, const float* mean, const float* rstd, int N, int C) = 0;
  virtual void matmul_forward(void* out, const void* inp, const void* weight, const void* bias, int N, int C, int OC) = 0;
  // dinp_mode / mode: whether the input gradient is added to dinp or written over it
  // (kernels/gradient_mode.h; the buffer's first writer need not be zeroed first).
  virtual void matmul_backward(void* dinp, float* dweight, float* dbias, const void* dout, const void* inp,
                               const void* weight, int N, int C, int OC, kernels::Gradient dinp_mode) = 0;
  virtual void attention_forward(void* out, void* att, const void* qkv, int B, int T, int C, int NH) = 0;
  virtual void attention_backward(void* dqkv, void* scratch, const void* dout, const void* qkv, const void* att,
                                  int B, int T, int C, int NH) = 0;
  virtual void gelu_forward(void* out, const void* inp, std::size_t n) = 0;
  virtual void gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, kernels::Gradient mode) = 0;
  // out[n,c] += base[n,c] + bias[c] (bias may be null): the residual after a row-parallel GEMM,
  // whose bias is added once, after the TP all-reduce.
  virtual void residual_bias(void* out, const void* base, const void* bias, int N, int C) = 0;
  // dbias[c] += sum_n dout[n,c] (dbias may be null: nothing to do).
  virtual void bias_backward(float* dbias, const void* dout, int N, int C) = 0;

  // Vocabulary-parallel embedding (Megatron-LM's VocabParallelEmbedding): this rank holds rows
  // [begin, begin + rows) of the word embedding. out[n] = wte[tokens[n] - begin] when the token
  // is one of them, else 0 (the TP all-reduce completes the lookup).
  virtual void embedding_lookup(void* out, const std::int32_t* tokens, const void* wte, int begin, int rows, int N,
                                int C) = 0;
  // out[n] += wpe[n mod T].
  virtual void add_positions(void* out, const void* wpe, int N, int T, int C) = 0;
  // dwte[tokens[n] - begin] += dout[n] for this rank's tokens, dwpe[n mod T] += dout[n] (fp32).
  virtual void embedding_backward(float* dwte, float* dwpe, const void* dout, const std::int32_t* tokens, int begin,
                                  int rows, int N, int T, int C) = 0;

  // Vocabulary-parallel cross-entropy (Megatron-LM's _VocabParallelCrossEntropy), over this
  // rank's logits [N, Vl] of which the first `valid` columns are real vocabulary:
  // 1. row_max: maxima[n] = max over the valid columns (fp32), all-gathered over TP;
  virtual void ce_row_max(float* maxima, const void* logits, int N, int Vl, int valid) = 0;
  // 2. ce_exp: with m = max over the tp gathered maxima [tp, N], sums[n] = sum of exp(logit - m)
  //    over the valid columns, sums[N + n] = logit of the target - m when this rank holds the
  //    target (else 0); sums are then all-reduced over TP. The logits may be left as they are
  //    or hold exp(logit - m) (the CPU's loop keeps them): only ce_normalize reads them next;
  virtual void ce_exp(void* logits, float* sums, const float* maxima, int tp, const std::int32_t* targets, int begin,
                      int N, int Vl, int valid) = 0;
  // 3. ce_normalize: probabilities := exp(logit - m) / sums[n] in place (padding columns 0); adds
  //    the micro-batch's mean loss (1/N) sum_n (log sums[n] - sums[N + n]) to the backend's loss
  //    accumulator;
  virtual void ce_normalize(void* probs, const float* sums, const float* maxima, int tp, int N, int Vl, int valid) = 0;
  // 4. ce_backward: dlogits = (probs - onehot(target)) * scale, in place over the probabilities.
  virtual void ce_backward(void* probs, const std::int32_t* targets, int begin, int N, int Vl, float scale) = 0;
  // The losses ce_normalize added since the last call (a host read; waits on a GPU).
  virtual double take_loss() = 0;

  // AdamW on n fp32 master weights; when `compute_copy` is not null, writes the updated weights
  // rounded to the compute type there (mixed precision). grads are multiplied by
  // `grad_multiplier` first (1 / loss scale). With `skip_when_nonfinite`, nothing changes when
  // the step's non-finite flag (below) is set.
  virtual void adamw(float* master, void* compute_copy, float* m, float* v, const float* grads, std::size_t n,
                     const kernels::AdamWSettings& settings, int step, float grad_multiplier,
                     bool skip_when_nonfinite = false) = 0;

  // Dynamic loss scaling (fp16; Micikevicius et al. 2018, §3.2) with no host synchronisation
  // before the update: flag_nonfinite() sets the step's flag when any of n fp32 values is inf or
  // NaN; reduce_nonfinite() sums the flag over `world` on the compute queue, so that every rank
  // skips or applies the step alike; take_loss() reads the flag together with the loss
  // (nonfinite_at_take()) and clears both.
  virtual void flag_nonfinite(const float* values, std::size_t n) = 0;
  virtual runtime::Status reduce_nonfinite(runtime::Communicator& world) = 0;
  virtual bool nonfinite_at_take() const = 0;

 protected:
  runtime::MemoryTracker memory_;
};

// The byte the CPU backend fills every Fill::none allocation with, always rather than on request,
// so that every CPU test checks the `none`s: the fills took 0.2-0.9% of the steps' time (summed
// over the ranks, weights' set-up included; tiny, small and a 2-layer GPT-2 124M at tp 1 and at
// tp 2 x pp 2, 10 steps on 2 cores). 0xFF bytes are a quiet NaN in fp32, bf16 and fp16 alike, and
// -1 in int32 (a token outside every vocabulary).
inline constexpr unsigned char kUnsetPoisonByte = 0xFF;

// The CPU backend: the CPU kernels (kernels/cpu) on host memory, fp32.
std::unique_ptr<Backend> make_cpu_backend();

}  // namespace plansight::probe
