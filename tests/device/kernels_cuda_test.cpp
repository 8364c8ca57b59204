// Every CUDA twin in plansight::kernels::cuda against its CPU reference on seeded random inputs,
// device memory from cudaMalloc, launches on a created stream. Tolerance: |gpu - cpu| <=
// rtol (|cpu| + max|cpu|), rtol = 1e-5 (fp32; the scale term absorbs cancellation near zero).
// Without a usable device each test prints "SKIPPED: no CUDA device (<reason>)" and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "plansight/kernels/kernels.h"
#include "plansight/kernels/cuda/kernels_cuda.h"

namespace plansight::kernels {
namespace {

// Empty when a device is usable, else why not (cudaGetDeviceCount's error or "0 devices").
std::string no_device_reason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
  if (count == 0) return "cudaGetDeviceCount found 0 devices";
  return {};
}

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host) : size_(host.size()) {
    error_ = cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes());
    if (error_ == cudaSuccess) error_ = cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice);
    if (error_ != cudaSuccess) ADD_FAILURE() << "device buffer of " << bytes() << " bytes: " << cudaGetErrorString(error_);
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  cudaError_t error() const { return error_; }
  std::vector<T> to_host() const {  // call after the stream is synchronised
    std::vector<T> host(size_);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

 private:
  std::size_t bytes() const { return size_ * sizeof(T); }
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
  cudaError_t error_ = cudaSuccess;
};

std::vector<float> random_normal(std::size_t n, std::uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<std::int32_t> random_tokens(std::size_t n, int vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(0, vocab - 1);
  std::vector<std::int32_t> v(n);
  for (std::int32_t& x : v) x = dist(rng);
  return v;
}

void expect_close(const char* what, const std::vector<float>& gpu, const std::vector<float>& cpu,
                  float rtol = 1e-5f) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  float scale = 0.0f;
  for (float x : cpu) scale = std::max(scale, std::fabs(x));
  int mismatches = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const float limit = rtol * (std::fabs(cpu[i]) + scale);
    if (!(std::fabs(gpu[i] - cpu[i]) <= limit) && ++mismatches <= 5) {
      ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << " cpu " << cpu[i] << " (limit "
                    << limit << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": " << mismatches << " of " << cpu.size() << " differ";
}

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr
#define ASSERT_OK(expr)                                      \
  do {                                                       \
    const cuda::Status status_ = (expr);                     \
    ASSERT_TRUE(status_.ok()) << #expr << ": " << status_.message(); \
  } while (false)

class CudaKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = no_device_reason();
    if (!reason.empty()) {
      std::printf("SKIPPED: no CUDA device (%s)\n", reason.c_str());
      GTEST_SKIP() << "no CUDA device (" << reason << ")";
    }
    ASSERT_CUDA(cudaStreamCreate(&stream_));
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  void sync() { ASSERT_CUDA(cudaStreamSynchronize(stream_)); }

  cudaStream_t stream_ = nullptr;
};

TEST_F(CudaKernelsTest, EncoderForwardAndBackwardMatchCpu) {
  const int B = 3, T = 17, C = 40, V = 11;  // few tokens: rows of dwte collide (atomics)
  const auto tokens = random_tokens(std::size_t{1} * B * T, V, 1);
  const auto wte = random_normal(std::size_t{1} * V * C, 2);
  const auto wpe = random_normal(std::size_t{1} * T * C, 3);
  const auto dout = random_normal(std::size_t{1} * B * T * C, 4);
  auto dwte = random_normal(wte.size(), 5);  // non-zero: backward must accumulate
  auto dwpe = random_normal(wpe.size(), 6);
  std::vector<float> out(dout.size());
  DeviceBuffer<std::int32_t> d_tokens(tokens);
  DeviceBuffer<float> d_wte(wte), d_wpe(wpe), d_dout(dout), d_dwte(dwte), d_dwpe(dwpe), d_out(out);
  ASSERT_CUDA(d_out.error());
  ASSERT_OK(cuda::encoder_forward(d_out.get(), d_tokens.get(), d_wte.get(), d_wpe.get(), B, T, C, stream_));
  ASSERT_OK(cuda::encoder_backward(d_dwte.get(), d_dwpe.get(), d_dout.get(), d_tokens.get(), B, T, C, stream_));
  sync();
  cpu::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
  cpu::encoder_backward(dwte.data(), dwpe.data(), dout.data(), tokens.data(), B, T, C);
  expect_close("encoder out", d_out.to_host(), out);
  expect_close("encoder dwte", d_dwte.to_host(), dwte);
  expect_close("encoder dwpe", d_dwpe.to_host(), dwpe);
}

TEST_F(CudaKernelsTest, LayerNormForwardAndBackwardMatchCpu) {
  const int N = 37, C = 257;  // C not a multiple of 32, N not of the rows per block
  const auto inp = random_normal(std::size_t{1} * N * C, 11, 2.0f);
  const auto weight = random_normal(C, 12);
  const auto bias = random_normal(C, 13);
  const auto dout = random_normal(inp.size(), 14);
  auto dinp = random_normal(inp.size(), 15);
  auto dweight = random_normal(C, 16);
  auto dbias = random_normal(C, 17);
  std::vector<float> out(inp.size()), mean(N), rstd(N);
  DeviceBuffer<float> d_inp(inp), d_weight(weight), d_bias(bias), d_dout(dout), d_dinp(dinp),
      d_dweight(dweight), d_dbias(dbias), d_out(out), d_mean(mean), d_rstd(rstd);
  ASSERT_CUDA(d_rstd.error());
  ASSERT_OK(cuda::layernorm_forward(d_out.get(), d_mean.get(), d_rstd.get(), d_inp.get(),
                                    d_weight.get(), d_bias.get(), N, C, stream_));
  sync();
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(),
                         bias.data(), N, C);
  expect_close("layernorm out", d_out.to_host(), out);
  expect_close("layernorm mean", d_mean.to_host(), mean);
  expect_close("layernorm rstd", d_rstd.to_host(), rstd);
  // Backward from the CPU's saved statistics on both sides, so only the backward is compared.
  DeviceBuffer<float> d_mean_cpu(mean), d_rstd_cpu(rstd);
  ASSERT_OK(cuda::layernorm_backward(d_dinp.get(), d_dweight.get(), d_dbias.get(), d_dout.get(),
                                     d_inp.get(), d_weight.get(), d_mean_cpu.get(),
                                     d_rstd_cpu.get(), N, C, stream_));
  sync();
  cpu::layernorm_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(),
                          weight.data(), mean.data(), rstd.data(), N, C);
  expect_close("layernorm dinp", d_dinp.to_host(), dinp);
  expect_close("layernorm dweight", d_dweight.to_host(), dweight);
  expect_close("layernorm dbias", d_dbias.to_host(), dbias);
}

TEST_F(CudaKernelsTest, GeluForwardAndBackwardMatchCpu) {
  const std::size_t n = 10007;
  const auto inp = random_normal(n, 21, 3.0f);
  const auto dout = random_normal(n, 22);
  auto dinp = random_normal(n, 23);
  std::vector<float> out(n);
  DeviceBuffer<float> d_inp(inp), d_dout(dout), d_dinp(dinp), d_out(out);
  ASSERT_CUDA(d_out.error());
  ASSERT_OK(cuda::gelu_forward(d_out.get(), d_inp.get(), n, stream_));
  ASSERT_OK(cuda::gelu_backward(d_dinp.get(), d_inp.get(), d_dout.get(), n, stream_));
  sync();
  cpu::gelu_forward(out.data(), inp.data(), n);
  cpu::gelu_backward(dinp.data(), inp.data(), dout.data(), n);
  expect_close("gelu out", d_out.to_host(), out);
  expect_close("gelu dinp", d_dinp.to_host(), dinp);
}

TEST_F(CudaKernelsTest, ResidualForwardAndBackwardMatchCpu) {
  const std::size_t n = 10007;
  const auto a = random_normal(n, 31), b = random_normal(n, 32), dout = random_normal(n, 33);
  auto da = random_normal(n, 34), db = random_normal(n, 35);
  std::vector<float> out(n);
  DeviceBuffer<float> d_a(a), d_b(b), d_dout(dout), d_da(da), d_db(db), d_out(out);
  ASSERT_CUDA(d_out.error());
  ASSERT_OK(cuda::residual_forward(d_out.get(), d_a.get(), d_b.get(), n, stream_));
  ASSERT_OK(cuda::residual_backward(d_da.get(), d_db.get(), d_dout.get(), n, stream_));
  sync();
  cpu::residual_forward(out.data(), a.data(), b.data(), n);
  cpu::residual_backward(da.data(), db.data(), dout.data(), n);
  expect_close("residual out", d_out.to_host(), out);
  expect_close("residual dinp1", d_da.to_host(), da);
  expect_close("residual dinp2", d_db.to_host(), db);
}

TEST_F(CudaKernelsTest, AdamWMatchesCpuOverThreeSteps) {
  const std::size_t n = 4099;
  auto params = random_normal(n, 41);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  const AdamWSettings settings{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
  DeviceBuffer<float> d_params(params), d_m(m), d_v(v);
  ASSERT_CUDA(d_v.error());
  for (int step = 1; step <= 3; ++step) {
    const auto grads = random_normal(n, 42 + static_cast<std::uint32_t>(step));
    DeviceBuffer<float> d_grads(grads);
    ASSERT_OK(cuda::adamw_update(d_params.get(), d_m.get(), d_v.get(), d_grads.get(), n, settings,
                                 step, stream_));
    sync();
    cpu::adamw_update(params.data(), m.data(), v.data(), grads.data(), n, settings, step);
  }
  expect_close("adamw params", d_params.to_host(), params);
  expect_close("adamw m", d_m.to_host(), m);
  expect_close("adamw v", d_v.to_host(), v);
}

TEST_F(CudaKernelsTest, SoftmaxCrossEntropyForwardAndBackwardMatchCpu) {
  const int N = 9, V = 1003;
  auto logits = random_normal(std::size_t{1} * N * V, 51, 3.0f);
  for (int j = 0; j < V; ++j) logits[static_cast<std::size_t>(V) + j] += 1000.0f;  // needs max-subtraction
  auto targets = random_tokens(N, V, 52);
  targets[4] = cpu::kDefaultIgnoreIndex;
  const auto dlosses = random_normal(N, 53);
  auto dlogits = random_normal(logits.size(), 54);
  std::vector<float> losses(N), probs(logits.size());
  DeviceBuffer<float> d_logits(logits), d_dlosses(dlosses), d_dlogits(dlogits), d_losses(losses),
      d_probs(probs);
  DeviceBuffer<std::int32_t> d_targets(targets);
  ASSERT_CUDA(d_probs.error());
  ASSERT_OK(cuda::softmax_crossentropy_forward(d_losses.get(), d_probs.get(), d_logits.get(),
                                               d_targets.get(), N, V, cpu::kDefaultIgnoreIndex,
                                               stream_));
  sync();
  cpu::softmax_crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N,
                                    V, cpu::kDefaultIgnoreIndex);
  expect_close("softmax probs", d_probs.to_host(), probs);
  const auto gpu_losses = d_losses.to_host();
  expect_close("crossentropy losses", gpu_losses, losses);
  EXPECT_EQ(gpu_losses[4], 0.0f);
  // Backward from the CPU's probabilities on both sides.
  DeviceBuffer<float> d_probs_cpu(probs);
  ASSERT_OK(cuda::softmax_crossentropy_backward(d_dlogits.get(), d_dlosses.get(), d_probs_cpu.get(),
                                                d_targets.get(), N, V, cpu::kDefaultIgnoreIndex,
                                                stream_));
  sync();
  cpu::softmax_crossentropy_backward(dlogits.data(), dlosses.data(), probs.data(), targets.data(),
                                     N, V, cpu::kDefaultIgnoreIndex);
  expect_close("softmax dlogits", d_dlogits.to_host(), dlogits);
}

}  // namespace
}  // namespace plansight::kernels
