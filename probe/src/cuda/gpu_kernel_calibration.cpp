// GEMM, attention, AdamW and launch-overhead measurements of the GPU calibration
// (gpu_calibration.h), each through the CUDA twins the probe's GPU steps run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include <type_traits>

#include "device_array.h"
#include "gpu_timing.h"
#include "plansight/estimator/time_model.h"
#include "plansight/kernels/cuda/kernels_cuda.h"
#include "plansight/probe/cuda/gpu_calibration.h"

namespace plansight::probe::cuda {
namespace {

namespace est = plansight::estimator;
namespace kc = plansight::kernels::cuda;

struct Budget {
  int trials, reps;
};
Budget budget(CalibrationLevel level) { return level == CalibrationLevel::quick ? Budget{3, 5} : Budget{7, 20}; }

std::string status_text(const kc::Status& s) { return s.ok() ? std::string() : s.message(); }

}  // namespace

est::Precision GemmPrecision::precision() const {
  switch (dtype) {
    case kc::DType::bf16: return est::Precision::bf16;
    case kc::DType::fp16: return est::Precision::fp16;
    case kc::DType::fp32: return fp32_math == kc::Fp32Math::tf32 ? est::Precision::tf32 : est::Precision::fp32;
  }
  return est::Precision::fp32;
}

std::vector<GemmPrecision> default_gemm_precisions() {
  return {{kc::DType::bf16, kc::Fp32Math::strict},
          {kc::DType::fp16, kc::Fp32Math::strict},
          {kc::DType::fp32, kc::Fp32Math::tf32},
          {kc::DType::fp32, kc::Fp32Math::strict}};
}

Result<std::string> gpu_device_name(int device) {
  cudaDeviceProp props{};
  if (auto s = cuda_ok(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties(" + std::to_string(device) + ")");
      !s) {
    return s.errors();
  }
  char text[512];
  std::snprintf(text, sizeof(text), "%s (sm_%d%d, %d SMs, %.1f GiB)", props.name, props.major, props.minor,
                props.multiProcessorCount, static_cast<double>(props.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  return std::string(text);
}

namespace {

// Which GEMM of a linear layer a calibration shape is (calibration_gemm_shapes names them), so
// that it is timed with the layout, output type and beta the training step runs it with.
enum class GemmRole { forward, input_gradient, weight_gradient };
GemmRole role_of(const std::string& name) {
  const auto ends_with = [&name](const std::string& tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends_with(".dgrad") ? GemmRole::input_gradient : ends_with(".wgrad") ? GemmRole::weight_gradient : GemmRole::forward;
}

// The shape's GEMM as matmul_forward / matmul_backward run it for the layer it belongs to
// (calibration_gemm_shapes: forward (T, out, in), dgrad (T, in, out), wgrad (in, out, T)):
//  - forward: out[T,out] = inp[T,in] weight[out,in]^T into the element type;
//  - input gradient: dinp[T,in] = dout[T,out] weight[out,in] (no transposes, beta 0: the probe's
//    backward has each input gradient's first writer overwrite it, kernels::Gradient);
//  - weight gradient: dweight[out,in] += dout[T,out]^T inp[T,in] (A transposed, fp32, beta 1).
// A, B and C are the call's first, second and output operands, of a_elems, b_elems and c_elems.
struct GemmCall {
  GemmRole role;
  int m, n, k;
  std::size_t a_elems() const { return static_cast<std::size_t>(role == GemmRole::weight_gradient ? n : m) * k; }
  std::size_t b_elems() const { return static_cast<std::size_t>(role == GemmRole::weight_gradient ? m : n) * k; }
  std::size_t c_elems() const { return static_cast<std::size_t>(m) * n; }
};

template <class E>
std::string call_gemm(const GemmCall& g, DeviceArray& a, DeviceArray& b, DeviceArray& c, kc::Blas& blas,
                      cudaStream_t stream) {
  switch (g.role) {
    case GemmRole::forward:  // N = T (m), C = in (k), OC = out (n)
      return status_text(kc::matmul_forward(c.as<E>(), a.as<E>(), b.as<E>(), nullptr, g.m, g.k, g.n, blas, stream));
    case GemmRole::input_gradient:  // N = T (m), C = in (n), OC = out (k); A = dout, B = weight
      return status_text(kc::matmul_backward(c.as<E>(), nullptr, nullptr, a.as<E>(), nullptr, b.as<E>(), g.m, g.n, g.k,
                                             blas, stream, kernels::Gradient::overwrite));
    case GemmRole::weight_gradient:  // N = T (k), C = in (m), OC = out (n); A = dout, B = inp
      return status_text(kc::matmul_backward(static_cast<E*>(nullptr), c.as<float>(), nullptr, a.as<E>(), b.as<E>(),
                                             nullptr, g.k, g.m, g.n, blas, stream));
  }
  return "unknown GEMM role";
}

}  // namespace

Result<est::GemmSample> measure_gpu_gemm(const GemmShape& shape, const GemmPrecision& precision, kc::Blas& blas,
                                         CalibrationLevel level) {
  const GemmCall g{role_of(shape.name), static_cast<int>(shape.m), static_cast<int>(shape.n), static_cast<int>(shape.k)};
  const std::string what = shape.name + " " + std::string(kc::to_string(precision.dtype));
  auto a = DeviceArray::make(precision.dtype, g.a_elems(), what + " A");
  if (!a) return a.errors();
  auto b = DeviceArray::make(precision.dtype, g.b_elems(), what + " B");
  if (!b) return b.errors();
  const kc::DType c_type = g.role == GemmRole::weight_gradient ? kc::DType::fp32 : precision.dtype;
  auto c = DeviceArray::make(c_type, g.c_elems(), what + " C");
  if (!c) return c.errors();
  blas.set_fp32_math(precision.fp32_math);
  cudaStream_t stream = nullptr;
  auto call = [&]() -> std::string {
    switch (precision.dtype) {
      case kc::DType::bf16: return call_gemm<kc::bfloat16>(g, *a, *b, *c, blas, stream);
      case kc::DType::fp16: return call_gemm<kc::float16>(g, *a, *b, *c, blas, stream);
      case kc::DType::fp32: return call_gemm<float>(g, *a, *b, *c, blas, stream);
    }
    return "unknown element type";
  };
  const Budget tries = budget(level);
  auto seconds = seconds_per_call(stream, tries.trials, tries.reps, call);
  if (!seconds) return seconds.errors();
  est::GemmSample sample;
  sample.m = shape.m;
  sample.n = shape.n;
  sample.k = shape.k;
  sample.precision = precision.precision();
  sample.seconds = *seconds;
  return sample;
}

Result<double> measure_launch_overhead(CalibrationLevel level) {
  auto one = DeviceArray::make(kc::DType::fp32, 1, "launch overhead");
  if (!one) return one.errors();
  cudaStream_t stream = nullptr;
  const Budget b = budget(level);
  return seconds_per_call(stream, b.trials, b.reps * 50, [&] {
    return status_text(kc::gelu_forward(one->as<float>(), one->as<float>(), 1, stream));
  });
}

Result<est::AttentionSample> measure_gpu_attention(const ProbeRequest& r, CalibrationLevel level, kc::Blas& blas) {
  // In the run's precision: the estimator uses the sample for the run it calibrates (its
  // attention at bf16 speed would make an fp32 run's prediction far too fast).
  const kc::DType dtype = r.precision == Precision::bf16   ? kc::DType::bf16
                          : r.precision == Precision::fp16 ? kc::DType::fp16
                                                           : kc::DType::fp32;
  blas.set_fp32_math(r.precision == Precision::tf32 ? kc::Fp32Math::tf32 : kc::Fp32Math::strict);
  const std::int64_t tp = std::max<std::int64_t>(r.layout.tp, 1);
  const int B = static_cast<int>(r.micro_batch), T = static_cast<int>(r.seq_len);
  const int NH = static_cast<int>(r.model.heads / tp), C = static_cast<int>(r.model.hidden / tp);
  const std::size_t qkv_n = static_cast<std::size_t>(B) * T * 3 * C, att_n = static_cast<std::size_t>(B) * NH * T * T;
  const std::size_t out_n = static_cast<std::size_t>(B) * T * C;
  auto qkv = DeviceArray::make(dtype, qkv_n, "attention qkv");
  auto att = DeviceArray::make(dtype, att_n, "attention probabilities");
  auto scratch = DeviceArray::make(dtype, att_n, "attention scratch");
  auto out = DeviceArray::make(dtype, out_n, "attention output");
  auto dout = DeviceArray::make(dtype, out_n, "attention output gradient");
  auto dqkv = DeviceArray::make(dtype, qkv_n, "attention qkv gradient");
  for (const auto* a : {&qkv, &att, &scratch, &out, &dout, &dqkv}) {
    if (!*a) return a->errors();
  }
  cudaStream_t stream = nullptr;
  const Budget b = budget(level);
  // One element type's calls: T is float, kc::bfloat16 or kc::float16.
  const auto measure = [&](auto* tag) -> Result<est::AttentionSample> {
    using T_ = std::remove_pointer_t<decltype(tag)>;
    auto forward = seconds_per_call(stream, b.trials, b.reps, [&] {
      return status_text(kc::attention_forward(out->as<T_>(), att->as<T_>(), qkv->as<T_>(), B, T, C, NH, blas, stream));
    });
    if (!forward) return forward.errors();
    auto backward = seconds_per_call(stream, b.trials, b.reps, [&] {
      return status_text(kc::attention_backward(dqkv->as<T_>(), scratch->as<T_>(), dout->as<T_>(), qkv->as<T_>(),
                                                att->as<T_>(), B, T, C, NH, blas, stream));
    });
    if (!backward) return backward.errors();
    est::AttentionSample s;
    s.batch_heads = static_cast<std::int64_t>(B) * NH;
    s.seq = T;
    s.head_dim = C / std::max(NH, 1);
    s.forward_s = *forward;
    s.backward_s = *backward;
    return s;
  };
  auto sample = dtype == kc::DType::bf16   ? measure(static_cast<kc::bfloat16*>(nullptr))
                : dtype == kc::DType::fp16 ? measure(static_cast<kc::float16*>(nullptr))
                                           : measure(static_cast<float*>(nullptr));
  blas.set_fp32_math(kc::Fp32Math::strict);
  return sample;
}

Result<double> measure_gpu_optimizer(const ProbeRequest& r, CalibrationLevel level) {
  // One layer's parameters on one TP rank (GPT-2: 12h^2 + 13h, Narayanan et al. 2021, eq. 2 with biases).
  const double h = static_cast<double>(r.model.hidden);
  const auto n = static_cast<std::size_t>((12 * h * h + 13 * h) / static_cast<double>(std::max<std::int64_t>(r.layout.tp, 1)));
  auto master = DeviceArray::make(kc::DType::fp32, n, "AdamW master weights");
  auto params = DeviceArray::make(kc::DType::bf16, n, "AdamW bf16 weights");
  auto m = DeviceArray::make(kc::DType::fp32, n, "AdamW first moment");
  auto v = DeviceArray::make(kc::DType::fp32, n, "AdamW second moment");
  auto grads = DeviceArray::make(kc::DType::fp32, n, "AdamW gradients");
  for (const auto* a : {&master, &params, &m, &v, &grads}) {
    if (!*a) return a->errors();
  }
  cudaStream_t stream = nullptr;
  int step = 0;
  const Budget b = budget(level);
  auto seconds = seconds_per_call(stream, b.trials, b.reps, [&] {
    return status_text(kc::adamw_update(master->as<float>(), params->as<kc::bfloat16>(), m->as<float>(),
                                        v->as<float>(), grads->as<float>(), n, kernels::AdamWSettings{}, ++step, 1.0f,
                                        stream));
  });
  if (!seconds) return seconds.errors();
  // The bytes the time model charges for a bf16 plan with fp32 master weights and fp32 gradients.
  est::TrainingSpec t;
  t.precision = est::Precision::bf16;
  t.grad_precision = est::Precision::fp32;
  t.master_precision = est::MasterPrecision::fp32;
  t.optimizer = est::Optimizer::adam;
  const double bytes = static_cast<double>(n) * est::optimizer_bytes_per_parameter(t);
  return *seconds > 0 ? bytes / *seconds : 0.0;
}

}  // namespace plansight::probe::cuda
