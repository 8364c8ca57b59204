// CudaBackend: every Backend operation as kernels::cuda launches on the rank's streams. Pointers
// typed void* are in the compute type; the launchers' overloads are picked by act_. Every failed
// launch or CUDA call throws RankFailure naming it (the rank's thread turns it into the run's
// error). Small host-to-device copies (a micro-batch's tokens) go through a ring of pinned
// buffers so the host never waits for the stream; large ones (initial weights) are synchronous.
#include "cuda_backend.h"

#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <string>
#include <thread>

#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/kernels/cuda/vocab_parallel.h"
#include "plansight/runtime/cuda/device_allocator.h"
#include "plansight/runtime/cuda/memory_fit.h"
#include "rank_context.h"

namespace plansight::probe::cuda {
namespace {

namespace kcu = plansight::kernels::cuda;
using kcu::bfloat16;
using kcu::float16;

void ok(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clears a non-sticky error
  throw RankFailure(std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

void ok(const kcu::Status& s) {
  if (!s.ok()) throw RankFailure(s.message());
}

kcu::DType dtype(Elem e) {
  switch (e) {
    case Elem::bf16: return kcu::DType::bf16;
    case Elem::f16: return kcu::DType::fp16;
    default: return kcu::DType::fp32;
  }
}

// Pinned staging of small uploads: kSlots buffers used in turn, each reused only after the copy
// out of it finished (its event).
constexpr std::size_t kSlots = 8;
constexpr std::size_t kSlotBytes = std::size_t{1} << 20;

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, const CudaPrecision& precision) : device_(device), precision_(precision) {}

  void init() {
    compute_thread_ = std::this_thread::get_id();  // init() runs on the rank's (compute) thread
    ok(cudaSetDevice(device_), "cudaSetDevice");
    ok(cudaStreamCreateWithFlags(&streams_[0], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    ok(cudaStreamCreateWithFlags(&streams_[1], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    for (cudaEvent_t& e : fences_) ok(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ok(kcu::Blas::create(blas_, precision_.fp32_math));
    ok(cudaMalloc(&scratch_, 16 * sizeof(float) + sizeof(double) + sizeof(float)), "cudaMalloc (step scratch)");
    loss_ = reinterpret_cast<double*>(static_cast<char*>(scratch_) + 16 * sizeof(float));
    nonfinite_ = reinterpret_cast<float*>(loss_ + 1);
    ok(cudaMemsetAsync(loss_, 0, sizeof(double) + sizeof(float), compute()), "cudaMemsetAsync (loss)");
    ok(cudaMallocHost(&pinned_, kSlots * kSlotBytes), "cudaMallocHost (upload staging)");
    for (cudaEvent_t& e : slot_done_) ok(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }

  ~CudaBackend() override {
    // Whatever is still enqueued finishes before its memory and streams go.
    for (cudaStream_t s : streams_) if (s) cudaStreamSynchronize(s);
    blas_.reset();
    if (scratch_) cudaFree(scratch_);
    if (pinned_) cudaFreeHost(pinned_);
    for (cudaEvent_t e : fences_) if (e) cudaEventDestroy(e);
    for (cudaEvent_t e : slot_done_) if (e) cudaEventDestroy(e);
    for (cudaStream_t s : streams_) if (s) cudaStreamDestroy(s);
  }

  cudaStream_t compute() const { return streams_[0]; }
  cudaStream_t grad() const { return streams_[1]; }
  cudaStream_t stream(Queue q) const { return q == Queue::compute ? compute() : grad(); }

  const char* kind() const override { return "cuda"; }
  Elem act() const override { return precision_.act; }

  void* allocate(runtime::MemoryCategory category, std::size_t bytes, Fill fill) override {
    void* p = nullptr;
    const cudaError_t e = cudaMallocAsync(&p, bytes, compute());
    std::size_t free_bytes = 0, total_bytes = 0;
    // Out of memory, or a size the device cannot hold at all (which the driver may refuse as an
    // invalid value rather than as out of memory): "does not fit" either way.
    if (e != cudaSuccess && (e == cudaErrorMemoryAllocation ||
                             (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && bytes > total_bytes))) {
      cudaGetLastError();
      if (total_bytes == 0) cudaMemGetInfo(&free_bytes, &total_bytes);
      throw RankFailure(runtime::cuda::does_not_fit("probe buffer", category, static_cast<std::int64_t>(bytes),
                                                    static_cast<std::int64_t>(free_bytes),
                                                    static_cast<std::int64_t>(total_bytes), device_, memory_.current())
                            .to_string());
    }
    ok(e, "cudaMallocAsync");
    // Fill::none: the caller's first operation writes every byte (backend.h), so no memset launch.
    if (fill == Fill::zeros) ok(cudaMemsetAsync(p, 0, bytes, compute()), "cudaMemsetAsync");
    memory_.allocate(category, static_cast<std::int64_t>(bytes));
    return p;
  }
  void release(runtime::MemoryCategory category, void* ptr, std::size_t bytes) override {
    // In the order of the releasing thread's stream (backend.h): the compute thread's buffers
    // have every use on the gradient stream fenced into the compute stream before their last
    // owner lets go (param_unit.cpp, rank_worker.cpp); one let go on the gradient thread is
    // freed after the gradient work enqueued before it.
    release_in(std::this_thread::get_id() == compute_thread_ ? Queue::compute : Queue::grad, category, ptr, bytes);
  }
  void release_in(Queue queue, runtime::MemoryCategory category, void* ptr, std::size_t bytes) override {
    memory_.release(category, static_cast<std::int64_t>(bytes));
    cudaFreeAsync(ptr, stream(queue));
  }
  void zero(void* ptr, std::size_t bytes, Queue q) override { ok(cudaMemsetAsync(ptr, 0, bytes, stream(q)), "cudaMemsetAsync"); }
  void copy(void* dst, const void* src, std::size_t bytes, Queue q) override {
    if (dst == src || bytes == 0) return;
    ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream(q)), "cudaMemcpyAsync (device to device)");
  }
  void upload(void* dst, const void* host, std::size_t bytes) override {
    if (bytes == 0) return;
    if (bytes > kSlotBytes) {
      ok(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, compute()), "cudaMemcpyAsync (host to device)");
      ok(cudaStreamSynchronize(compute()), "cudaStreamSynchronize");
      return;
    }
    const std::size_t slot = 1 + next_slot_++ % (kSlots - 1);  // slot 0 stages all_reduce_host and the loss
    ok(cudaEventSynchronize(slot_done_[slot]), "cudaEventSynchronize (upload staging)");
    char* staging = static_cast<char*>(pinned_) + slot * kSlotBytes;
    std::memcpy(staging, host, bytes);
    ok(cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyHostToDevice, compute()), "cudaMemcpyAsync (host to device)");
    ok(cudaEventRecord(slot_done_[slot], compute()), "cudaEventRecord");
  }
  void download(void* host, const void* src, std::size_t bytes) override {
    fence(Queue::grad, Queue::compute);
    ok(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, compute()), "cudaMemcpyAsync (device to host)");
    ok(cudaStreamSynchronize(compute()), "cudaStreamSynchronize");
  }
  void fence(Queue from, Queue to) override {
    if (from == to) return;
    cudaEvent_t e = fences_[from == Queue::compute ? 0 : 1];
    ok(cudaEventRecord(e, stream(from)), "cudaEventRecord (fence)");
    ok(cudaStreamWaitEvent(stream(to), e, 0), "cudaStreamWaitEvent (fence)");
  }
  void synchronize() override {
    ok(cudaStreamSynchronize(grad()), "cudaStreamSynchronize");
    ok(cudaStreamSynchronize(compute()), "cudaStreamSynchronize");
  }
  runtime::Status all_reduce_host(runtime::Communicator& comm, float* values, std::size_t n) override {
    if (n > 16) return make_error("backend", "all_reduce_host takes at most 16 values");
    float* pinned = static_cast<float*>(pinned_) + 0;  // slot 0's first bytes: synchronised below
    ok(cudaEventSynchronize(slot_done_[0]), "cudaEventSynchronize");
    std::memcpy(pinned, values, n * sizeof(float));
    ok(cudaMemcpyAsync(scratch_, pinned, n * sizeof(float), cudaMemcpyHostToDevice, compute()), "cudaMemcpyAsync");
    auto status = comm.all_reduce(static_cast<float*>(scratch_), n);
    if (!status) return status;
    ok(cudaMemcpyAsync(pinned, scratch_, n * sizeof(float), cudaMemcpyDeviceToHost, compute()), "cudaMemcpyAsync");
    ok(cudaStreamSynchronize(compute()), "cudaStreamSynchronize");
    std::memcpy(values, pinned, n * sizeof(float));
    return runtime::ok_status();
  }

  void to_act(void* dst, const float* src, std::size_t n, Queue q) override {
    switch (precision_.act) {
      case Elem::bf16: return ok(kcu::convert(static_cast<bfloat16*>(dst), src, n, stream(q)));
      case Elem::f16: return ok(kcu::convert(static_cast<float16*>(dst), src, n, stream(q)));
      default: return copy(dst, src, n * sizeof(float), q);
    }
  }
  void to_f32(float* dst, const void* src, std::size_t n, Queue q) override {
    switch (precision_.act) {
      case Elem::bf16: return ok(kcu::convert(dst, static_cast<const bfloat16*>(src), n, stream(q)));
      case Elem::f16: return ok(kcu::convert(dst, static_cast<const float16*>(src), n, stream(q)));
      default: return copy(dst, src, n * sizeof(float), q);
    }
  }
  void add_f32(float* dst, const float* src, std::size_t n, Queue q) override { ok(kcu::add_f32(dst, src, n, stream(q))); }

  // Calls f with the compute type's pointer type (a null pointer as a tag).
  template <class F>
  void typed(F&& f) {
    switch (precision_.act) {
      case Elem::bf16: f(static_cast<bfloat16*>(nullptr)); return;
      case Elem::f16: f(static_cast<float16*>(nullptr)); return;
      default: f(static_cast<float*>(nullptr)); return;
    }
  }

  void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight, const void* bias,
                         int N, int C) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::layernorm_forward(static_cast<T*>(out), mean, rstd, static_cast<const T*>(inp), static_cast<const T*>(weight),
                                static_cast<const T*>(bias), N, C, compute()));
    });
  }
  void layernorm_backward(void* dinp, float* dweight, float* dbias, const void* dout, const void* inp,
                          const void* weight, const float* mean, const float* rstd, int N, int C) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::layernorm_backward(static_cast<T*>(dinp), dweight, dbias, static_cast<const T*>(dout), static_cast<const T*>(inp),
                                 static_cast<const T*>(weight), mean, rstd, N, C, compute()));
    });
  }
  void matmul_forward(void* out, const void* inp, const void* weight, const void* bias, int N, int C, int OC) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::matmul_forward(static_cast<T*>(out), static_cast<const T*>(inp), static_cast<const T*>(weight),
                             static_cast<const T*>(bias), N, C, OC, *blas_, compute()));
    });
  }
  void matmul_backward(void* dinp, float* dweight, float* dbias, const void* dout, const void* inp, const void* weight,
                       int N, int C, int OC, kernels::Gradient dinp_mode) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::matmul_backward(static_cast<T*>(dinp), dweight, dbias, static_cast<const T*>(dout), static_cast<const T*>(inp),
                              static_cast<const T*>(weight), N, C, OC, *blas_, compute(), dinp_mode));
    });
  }
  void attention_forward(void* out, void* att, const void* qkv, int B, int T_len, int C, int NH) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::attention_forward(static_cast<T*>(out), static_cast<T*>(att), static_cast<const T*>(qkv), B, T_len, C, NH,
                                *blas_, compute()));
    });
  }
  void attention_backward(void* dqkv, void* scratch, const void* dout, const void* qkv, const void* att, int B,
                          int T_len, int C, int NH) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::attention_backward(static_cast<T*>(dqkv), static_cast<T*>(scratch), static_cast<const T*>(dout),
                                 static_cast<const T*>(qkv), static_cast<const T*>(att), B, T_len, C, NH, *blas_, compute()));
    });
  }
  void gelu_forward(void* out, const void* inp, std::size_t n) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::gelu_forward(static_cast<T*>(out), static_cast<const T*>(inp), n, compute()));
    });
  }
  void gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, kernels::Gradient mode) override {
    typed([&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      ok(kcu::gelu_backward(static_cast<T*>(dinp), static_cast<const T*>(inp), static_cast<const T*>(dout), n, compute(), mode));
    });
  }
  void residual_bias(void* out, const void* base, const void* bias, int N, int C) override {
    ok(kcu::residual_bias(out, base, bias, N, C, dtype(act()), compute()));
  }
  void bias_backward(float* dbias, const void* dout, int N, int C) override {
    if (dbias) ok(kcu::bias_backward(dbias, dout, N, C, dtype(act()), compute()));
  }

  void embedding_lookup(void* out, const std::int32_t* tokens, const void* wte, int begin, int rows, int N,
                        int C) override {
    ok(kcu::embedding_lookup(out, tokens, wte, begin, rows, N, C, dtype(act()), compute()));
  }
  void add_positions(void* out, const void* wpe, int N, int T_len, int C) override {
    ok(kcu::add_positions(out, wpe, N, T_len, C, dtype(act()), compute()));
  }
  void embedding_backward(float* dwte, float* dwpe, const void* dout, const std::int32_t* tokens, int begin, int rows,
                          int N, int T_len, int C) override {
    ok(kcu::embedding_backward(dwte, dwpe, dout, tokens, begin, rows, N, T_len, C, dtype(act()), compute()));
  }

  void ce_row_max(float* maxima, const void* logits, int N, int Vl, int valid) override {
    ok(kcu::ce_row_max(maxima, logits, N, Vl, valid, dtype(act()), compute()));
  }
  void ce_exp(void* logits, float* sums, const float* maxima, int tp, const std::int32_t* targets, int begin, int N,
              int Vl, int valid) override {
    ok(kcu::ce_sums(sums, maxima, tp, logits, targets, begin, N, Vl, valid, dtype(act()), compute()));
  }
  void ce_normalize(void* probs, const float* sums, const float* maxima, int tp, int N, int Vl, int valid) override {
    ok(kcu::ce_normalize(probs, sums, maxima, tp, N, Vl, valid, loss_, dtype(act()), compute()));
  }
  void ce_backward(void* probs, const std::int32_t* targets, int begin, int N, int Vl, float scale) override {
    ok(kcu::ce_backward(probs, targets, begin, N, Vl, scale, dtype(act()), compute()));
  }
  double take_loss() override {
    // The loss and the non-finite flag sit side by side in the scratch: one copy, one wait.
    char* pinned = static_cast<char*>(pinned_) + kSlotBytes - 2 * sizeof(double);
    ok(cudaEventSynchronize(slot_done_[0]), "cudaEventSynchronize");
    ok(cudaMemcpyAsync(pinned, loss_, sizeof(double) + sizeof(float), cudaMemcpyDeviceToHost, compute()),
       "cudaMemcpyAsync (loss)");
    ok(cudaMemsetAsync(loss_, 0, sizeof(double) + sizeof(float), compute()), "cudaMemsetAsync (loss)");
    ok(cudaStreamSynchronize(compute()), "cudaStreamSynchronize");
    double loss = 0;
    float flag = 0;
    std::memcpy(&loss, pinned, sizeof loss);
    std::memcpy(&flag, pinned + sizeof(double), sizeof flag);
    nonfinite_at_take_ = flag != 0.0f;
    return loss;
  }

  void adamw(float* master, void* compute_copy, float* m, float* v, const float* grads, std::size_t n,
             const kernels::AdamWSettings& settings, int step, float grad_multiplier, bool skip_when_nonfinite) override {
    if (!compute_copy || act() == Elem::f32) {
      if (grad_multiplier != 1.0f || skip_when_nonfinite) {
        throw RankFailure("adamw: loss scaling needs a 16-bit compute copy (precision bf16 or fp16)");
      }
      if (!compute_copy) ok(kcu::adamw_update(master, m, v, grads, n, settings, step, compute()));
      else ok(kcu::adamw_update(master, static_cast<float*>(compute_copy), m, v, grads, n, settings, step, 1.0f, compute()));
      return;
    }
    const float* skip = skip_when_nonfinite ? nonfinite_ : nullptr;
    if (act() == Elem::bf16) {
      ok(kcu::adamw_update(master, static_cast<kcu::bfloat16*>(compute_copy), m, v, grads, n, settings, step,
                           grad_multiplier, skip, compute()));
    } else {
      ok(kcu::adamw_update(master, static_cast<kcu::float16*>(compute_copy), m, v, grads, n, settings, step,
                           grad_multiplier, skip, compute()));
    }
  }

  void flag_nonfinite(const float* values, std::size_t n) override {
    ok(kcu::flag_nonfinite(values, n, nonfinite_, compute()));
  }
  runtime::Status reduce_nonfinite(runtime::Communicator& world) override {
    // The world communicator of this rank runs on its compute stream (CudaDevice::world).
    return world.all_reduce(nonfinite_, 1);
  }
  bool nonfinite_at_take() const override { return nonfinite_at_take_; }

 private:
  int device_;
  CudaPrecision precision_;
  std::array<cudaStream_t, 2> streams_{};  // compute, gradient
  std::thread::id compute_thread_;          // the rank's thread (init()); release() picks its stream by it
  std::array<cudaEvent_t, 2> fences_{};    // recorded on compute, on gradient
  std::unique_ptr<kcu::Blas> blas_;
  void* scratch_ = nullptr;  // 16 floats for all_reduce_host, then the fp64 loss accumulator
  double* loss_ = nullptr;
  float* nonfinite_ = nullptr;  // the step's flag, right after the loss
  bool nonfinite_at_take_ = false;
  void* pinned_ = nullptr;   // kSlots slots; uploads use 1.., slot 0 stages all_reduce_host (its start) and take_loss (its end)
  std::array<cudaEvent_t, kSlots> slot_done_{};
  std::size_t next_slot_ = 0;
};

}  // namespace

Result<std::unique_ptr<Backend>> make_cuda_backend(int device, const CudaPrecision& precision) {
  auto backend = std::make_unique<CudaBackend>(device, precision);
  try {
    backend->init();
  } catch (const RankFailure& e) {
    return make_error("device", e.what());
  }
  return std::unique_ptr<Backend>(std::move(backend));
}

cudaStream_t compute_stream(Backend& backend) { return static_cast<CudaBackend&>(backend).compute(); }
cudaStream_t gradient_stream(Backend& backend) { return static_cast<CudaBackend&>(backend).grad(); }

}  // namespace plansight::probe::cuda
