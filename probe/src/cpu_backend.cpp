// The CPU backend: host memory through the rank's MemoryTracker (which keeps released arrays
// for reuse, memory_tracker.h), the CPU kernels, and the loops of the vocabulary-parallel
// embedding and cross-entropy that have no kernel of their own. Both queues are the calling
// thread, so fences and synchronisation are no-ops. fp32 only. Fill::none allocations are
// poisoned (kUnsetPoisonByte), so a read before the first write shows as NaN in every CPU test.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "backend.h"
#include "plansight/kernels/kernels.h"
#include "rank_context.h"

namespace plansight::probe {
namespace {

namespace kc = plansight::kernels::cpu;

const float* f(const void* p) { return static_cast<const float*>(p); }
float* f(void* p) { return static_cast<float*>(p); }

class CpuBackend final : public Backend {
 public:
  const char* kind() const override { return "cpu"; }
  Elem act() const override { return Elem::f32; }

  void* allocate(runtime::MemoryCategory category, std::size_t bytes, Fill fill) override {
    const std::size_t count = (bytes + sizeof(float) - 1) / sizeof(float);
    float* block = memory_.take_block(count).release();  // zeroed, new or reused
    if (fill == Fill::none) std::memset(block, kUnsetPoisonByte, bytes);
    memory_.allocate(category, static_cast<std::int64_t>(bytes));
    return block;
  }
  void release(runtime::MemoryCategory category, void* ptr, std::size_t bytes) override {
    const std::size_t count = (bytes + sizeof(float) - 1) / sizeof(float);
    memory_.release(category, static_cast<std::int64_t>(bytes));
    memory_.give_back_block(count, std::unique_ptr<float[]>(f(ptr)));
  }
  void zero(void* ptr, std::size_t bytes, Queue) override { std::memset(ptr, 0, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes, Queue) override { std::memcpy(dst, src, bytes); }
  void upload(void* dst, const void* host, std::size_t bytes) override { std::memcpy(dst, host, bytes); }
  void download(void* host, const void* src, std::size_t bytes) override { std::memcpy(host, src, bytes); }
  void fence(Queue, Queue) override {}
  void synchronize() override {}
  runtime::Status all_reduce_host(runtime::Communicator& comm, float* values, std::size_t n) override {
    return comm.all_reduce(values, n);
  }

  void to_act(void* dst, const float* src, std::size_t n, Queue) override { std::memcpy(dst, src, n * sizeof(float)); }
  void to_f32(float* dst, const void* src, std::size_t n, Queue) override { std::memcpy(dst, src, n * sizeof(float)); }
  void add_f32(float* dst, const float* src, std::size_t n, Queue) override {
    for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
  }

  void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight, const void* bias,
                         int N, int C) override {
    kc::layernorm_forward(f(out), mean, rstd, f(inp), f(weight), f(bias), N, C);
  }
  void layernorm_backward(void* dinp, float* dweight, float* dbias, const void* dout, const void* inp,
                          const void* weight, const float* mean, const float* rstd, int N, int C) override {
    kc::layernorm_backward(f(dinp), dweight, dbias, f(dout), f(inp), f(weight), mean, rstd, N, C);
  }
  void matmul_forward(void* out, const void* inp, const void* weight, const void* bias, int N, int C, int OC) override {
    kc::matmul_forward(f(out), f(inp), f(weight), f(bias), N, C, OC);
  }
  void matmul_backward(void* dinp, float* dweight, float* dbias, const void* dout, const void* inp, const void* weight,
                       int N, int C, int OC, kernels::Gradient dinp_mode) override {
    kc::matmul_backward(f(dinp), dweight, dbias, f(dout), f(inp), f(weight), N, C, OC, dinp_mode);
  }
  void attention_forward(void* out, void* att, const void* qkv, int B, int T, int C, int NH) override {
    kc::attention_forward(f(out), f(att), f(qkv), B, T, C, NH);
  }
  void attention_backward(void* dqkv, void* scratch, const void* dout, const void* qkv, const void* att, int B, int T,
                          int C, int NH) override {
    kc::attention_backward(f(dqkv), f(scratch), f(dout), f(qkv), f(att), B, T, C, NH);
  }
  void gelu_forward(void* out, const void* inp, std::size_t n) override { kc::gelu_forward(f(out), f(inp), n); }
  void gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, kernels::Gradient mode) override {
    kc::gelu_backward(f(dinp), f(inp), f(dout), n, mode);
  }
  void residual_bias(void* out_v, const void* base_v, const void* bias_v, int N, int C) override {
    float* out = f(out_v);
    const float* base = f(base_v);
    const float* bias = f(bias_v);
    for (int n = 0; n < N; ++n) {
      float* row = out + static_cast<std::size_t>(n) * C;
      const float* b = base + static_cast<std::size_t>(n) * C;
      for (int c = 0; c < C; ++c) row[c] += b[c] + (bias ? bias[c] : 0.0f);
    }
  }
  void bias_backward(float* dbias, const void* dout_v, int N, int C) override {
    if (!dbias) return;
    const float* dout = f(dout_v);
    for (int n = 0; n < N; ++n) {
      const float* row = dout + static_cast<std::size_t>(n) * C;
      for (int c = 0; c < C; ++c) dbias[c] += row[c];
    }
  }

  void embedding_lookup(void* out_v, const std::int32_t* tokens, const void* wte_v, int begin, int rows, int N,
                        int C) override {
    float* out = f(out_v);
    const float* w = f(wte_v);
    for (int n = 0; n < N; ++n) {
      float* row = out + static_cast<std::size_t>(n) * C;
      const int tok = tokens[n];
      if (tok >= begin && tok < begin + rows) std::memcpy(row, w + static_cast<std::size_t>(tok - begin) * C, C * sizeof(float));
      else std::fill(row, row + C, 0.0f);
    }
  }
  void add_positions(void* out_v, const void* wpe_v, int N, int T, int C) override {
    float* out = f(out_v);
    const float* pos = f(wpe_v);
    for (int n = 0; n < N; ++n) {
      float* row = out + static_cast<std::size_t>(n) * C;
      const float* p = pos + static_cast<std::size_t>(n % T) * C;
      for (int c = 0; c < C; ++c) row[c] += p[c];
    }
  }
  void embedding_backward(float* dw, float* dp, const void* dout_v, const std::int32_t* tokens, int begin, int rows,
                          int N, int T, int C) override {
    const float* dout = f(dout_v);
    for (int n = 0; n < N; ++n) {
      const float* g = dout + static_cast<std::size_t>(n) * C;
      float* pr = dp + static_cast<std::size_t>(n % T) * C;
      for (int c = 0; c < C; ++c) pr[c] += g[c];
      const int tok = tokens[n];
      if (tok < begin || tok >= begin + rows) continue;
      float* wr = dw + static_cast<std::size_t>(tok - begin) * C;
      for (int c = 0; c < C; ++c) wr[c] += g[c];
    }
  }

  void ce_row_max(float* maxima, const void* logits, int N, int Vl, int valid) override {
    for (int n = 0; n < N; ++n) {
      const float* row = f(logits) + static_cast<std::size_t>(n) * Vl;
      float mx = -std::numeric_limits<float>::infinity();
      for (int v = 0; v < valid; ++v) mx = std::max(mx, row[v]);
      maxima[n] = mx;
    }
  }
  void ce_exp(void* logits, float* sums, const float* maxima, int tp, const std::int32_t* targets, int begin, int N,
              int Vl, int valid) override {
    for (int n = 0; n < N; ++n) {
      float mx = -std::numeric_limits<float>::infinity();
      for (int t = 0; t < tp; ++t) mx = std::max(mx, maxima[static_cast<std::size_t>(t) * N + n]);
      float* row = f(logits) + static_cast<std::size_t>(n) * Vl;
      const int target = targets[n] - begin;
      sums[N + n] = target >= 0 && target < valid ? row[target] - mx : 0.0f;
      float sum = 0;
      for (int v = 0; v < Vl; ++v) {
        row[v] = v < valid ? std::exp(row[v] - mx) : 0.0f;
        sum += row[v];
      }
      sums[n] = sum;
    }
  }
  void ce_normalize(void* probs, const float* sums, const float*, int, int N, int Vl, int) override {
    double loss = 0;
    for (int n = 0; n < N; ++n) {
      const float total = sums[n];
      loss += std::log(static_cast<double>(total)) - sums[N + n];
      float* row = f(probs) + static_cast<std::size_t>(n) * Vl;
      for (int v = 0; v < Vl; ++v) row[v] /= total;
    }
    loss_ += loss / N;
  }
  void ce_backward(void* probs, const std::int32_t* targets, int begin, int N, int Vl, float scale) override {
    for (int n = 0; n < N; ++n) {
      float* row = f(probs) + static_cast<std::size_t>(n) * Vl;
      const int target = targets[n] - begin;
      if (target >= 0 && target < Vl) row[target] -= 1.0f;
      for (int v = 0; v < Vl; ++v) row[v] *= scale;
    }
  }
  double take_loss() override {
    nonfinite_at_take_ = std::exchange(nonfinite_, 0.0f) != 0.0f;
    return std::exchange(loss_, 0.0);
  }

  void adamw(float* master, void* compute_copy, float* m, float* v, const float* grads, std::size_t n,
             const kernels::AdamWSettings& settings, int step, float grad_multiplier, bool skip_when_nonfinite) override {
    if (compute_copy || grad_multiplier != 1.0f) throw RankFailure("the CPU backend trains in fp32 only");
    if (skip_when_nonfinite && nonfinite_ != 0.0f) return;
    kc::adamw_update(master, m, v, grads, n, settings, step);
  }

  void flag_nonfinite(const float* values, std::size_t n) override {
    for (std::size_t i = 0; i < n && nonfinite_ == 0.0f; ++i) {
      if (!std::isfinite(values[i])) nonfinite_ = 1.0f;
    }
  }
  runtime::Status reduce_nonfinite(runtime::Communicator& world) override { return world.all_reduce(&nonfinite_, 1); }
  bool nonfinite_at_take() const override { return nonfinite_at_take_; }

 private:
  double loss_ = 0;
  float nonfinite_ = 0;  // this step's flag: 1 on a rank that saw inf/NaN, the ranks' count after reduce
  bool nonfinite_at_take_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace plansight::probe
