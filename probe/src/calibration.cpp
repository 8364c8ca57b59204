// Calibration micro-benchmarks on the CPU: GEMMs at the model's shapes, a streaming copy, tiny
// kernels, and (collective_calibration.cpp) the in-process collectives. Every figure is a median
// over repetitions, so one preempted call on a shared machine does not move it.
#include "plansight/probe/calibration.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <tuple>

#include "plansight/kernels/blas_threads.h"
#include "plansight/kernels/gelu.h"
#include "plansight/kernels/matmul.h"
#include "plansight/kernels/residual.h"
#include "plansight/estimator/parameters.h"
#include "plansight/probe/engine.h"
#include "calibration_util.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
namespace kc = plansight::kernels::cpu;

struct GemmBudget {
  double target_s;  // keep repeating until this much time was spent...
  int min_reps;     // ...and at least this many calls were timed
  int max_reps;
};
GemmBudget gemm_budget(CalibrationLevel level) {
  return level == CalibrationLevel::quick ? GemmBudget{0.005, 2, 20} : GemmBudget{0.02, 5, 100};
}

}  // namespace

std::vector<GemmShape> calibration_gemm_shapes(const ProbeRequest& r, CalibrationLevel level) {
  const auto& m = r.model;
  const std::int64_t tokens = r.micro_batch * r.seq_len;
  const std::int64_t tp = std::max<std::int64_t>(r.layout.tp, 1);
  const std::int64_t h = m.hidden, f = m.ffn_hidden;
  const std::int64_t v = estimator::padded_vocab(m.vocab, tp) / tp;  // the LM head's rows on one TP rank (probe_config.cpp)
  // Forward C[T, out] = X[T, in] W^T (Megatron column/row-parallel split of `out`/`in` by tp);
  // the backward GEMMs are the estimator's add_gemm(): dgrad (T, in, out), wgrad (in, out, T).
  const std::tuple<const char*, std::int64_t, std::int64_t> layers[] = {
      {"qkv", 3 * h / tp, h}, {"proj", h, h / tp}, {"fc1", f / tp, h}, {"fc2", h, f / tp}, {"lm_head", v, h}};
  std::vector<GemmShape> shapes;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  auto add = [&](std::string name, std::int64_t gm, std::int64_t gn, std::int64_t gk) {
    if (gm < 1 || gn < 1 || gk < 1 || !seen.insert({gm, gn, gk}).second) return;
    shapes.push_back({std::move(name), gm, gn, gk});
  };
  for (const auto& [name, out, in] : layers) {
    add(name, tokens, out, in);
    add(std::string(name) + ".dgrad", tokens, in, out);
    add(std::string(name) + ".wgrad", in, out, tokens);
  }
  const std::vector<std::int64_t> squares =
      level == CalibrationLevel::quick ? std::vector<std::int64_t>{64, 256} : std::vector<std::int64_t>{64, 128, 256, 512, 1024};
  for (auto s : squares) add("square", s, s, s);
  return shapes;
}

namespace {

// How the probe's layer runs a GEMM of this shape (probe/src/transformer_block.cpp, kernels/cpu/
// matmul.cpp), so that calibration times that call: a forward with its bias added after the GEMM
// (QKV and fc1 carry theirs; the projection's and fc2's go with the residual add), the input
// gradient as dout·W accumulated into dinp, the weight gradient as dout^T·X accumulated into dW
// with the bias gradient's row sum (every layer GEMM has a bias; the LM head has none). Timed as
// forwards without bias, the backward GEMMs of a CPU step ran 5-20% longer than calibrated: other
// transpositions, beta 1, and the bias passes (`plansight compare --operators`, 2026-11-28).
enum class GemmCall { forward, forward_bias, input_grad, weight_grad, weight_grad_bias };

GemmCall gemm_call_of(const std::string& name) {
  const auto dot = name.find('.');
  const std::string layer = name.substr(0, dot), pass = dot == std::string::npos ? "" : name.substr(dot + 1);
  const bool biased = layer == "qkv" || layer == "proj" || layer == "fc1" || layer == "fc2";
  if (pass == "dgrad") return GemmCall::input_grad;
  if (pass == "wgrad") return biased ? GemmCall::weight_grad_bias : GemmCall::weight_grad;
  return layer == "qkv" || layer == "fc1" ? GemmCall::forward_bias : GemmCall::forward;
}

}  // namespace

est::GemmSample measure_gemm(const GemmShape& shape, CalibrationLevel level, int concurrency) {
  const GemmBudget budget = gemm_budget(level);
  const GemmCall how = gemm_call_of(shape.name);
  // The layer's N tokens, C inputs and OC outputs (matmul.h's names) of each call, from the shape
  // as the estimator names it (calibration_gemm_shapes: forward (T, out, in), dgrad (T, in,
  // out), wgrad (in, out, T)).
  const bool input_grad = how == GemmCall::input_grad;
  const bool weight_grad = how == GemmCall::weight_grad || how == GemmCall::weight_grad_bias;
  const int N = static_cast<int>(weight_grad ? shape.k : shape.m);
  const int C = static_cast<int>(input_grad ? shape.n : weight_grad ? shape.m : shape.k);
  const int OC = static_cast<int>(input_grad ? shape.k : shape.n);
  // Each thread owns its operands, as each rank owns its weights and activations.
  auto make_call = [=](int) {
    auto inp = std::make_shared<std::vector<float>>(static_cast<std::size_t>(N) * C);    // X, or dX
    auto weight = std::make_shared<std::vector<float>>(static_cast<std::size_t>(OC) * C);  // W, or dW
    auto out = std::make_shared<std::vector<float>>(static_cast<std::size_t>(N) * OC);   // Y, or dY
    auto bias = std::make_shared<std::vector<float>>(static_cast<std::size_t>(OC));       // b, or db
    fill_pattern(*inp);
    fill_pattern(*weight);
    fill_pattern(*out);
    std::function<void()> call;
    switch (how) {
      case GemmCall::forward:
      case GemmCall::forward_bias:
        call = [=] {
          kc::matmul_forward(out->data(), inp->data(), weight->data(), how == GemmCall::forward_bias ? bias->data() : nullptr, N, C, OC);
        };
        break;
      case GemmCall::input_grad:
        // As the probe's backward writes an input gradient: overwritten (transformer_block.cpp).
        call = [=] {
          kc::matmul_backward_input(inp->data(), out->data(), weight->data(), N, C, OC, kernels::Gradient::overwrite);
        };
        break;
      case GemmCall::weight_grad:
      case GemmCall::weight_grad_bias: {
        auto w = std::make_shared<std::vector<float>>(static_cast<std::size_t>(OC) * C);
        fill_pattern(*w);
        call = [=] {
          kc::matmul_backward(nullptr, weight->data(), how == GemmCall::weight_grad_bias ? bias->data() : nullptr,
                              out->data(), inp->data(), w->data(), N, C, OC);
        };
        break;
      }
    }
    call();  // warm: pages, OpenBLAS packing buffers
    return call;
  };
  auto call = make_call(0);
  std::vector<double> times;
  double spent = 0;
  while (static_cast<int>(times.size()) < budget.max_reps &&
         (spent < budget.target_s || static_cast<int>(times.size()) < budget.min_reps)) {
    times.push_back(seconds_of(call));
    spent += times.back();
  }
  est::GemmSample sample;
  sample.m = shape.m;
  sample.n = shape.n;
  sample.k = shape.k;
  sample.precision = est::Precision::fp32;
  sample.seconds = median(times);
  {
    // A call's mean over windows of calls back to back, alone as with shared cores: a step adds
    // up every call, and one call's median is 8-10% under their mean on a VM whose calls jitter
    // (bench/results/calibration-cpu.txt). Windows long against the scheduler's time slice (a
    // few ms), so that with shared cores every thread gets its share.
    const double window_s = level == CalibrationLevel::quick ? 0.015 : 0.04;
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    const double slowdown = std::max(1.0, concurrency / cores);
    const int reps = static_cast<int>(std::clamp(window_s / (sample.seconds * slowdown), 2.0, 2000.0));
    sample.seconds = shared_seconds_per_call(concurrency, level == CalibrationLevel::quick ? 2 : 3, reps, make_call);
  }
  return sample;
}

double measure_copy_bandwidth(CalibrationLevel level, int concurrency) {
  // 4x (quick: 2x) a 32 MiB last-level cache in total, so the copy streams from DRAM.
  const std::size_t total_bytes = (level == CalibrationLevel::quick ? 64u : 128u) << 20;
  const std::size_t floats = total_bytes / sizeof(float) / static_cast<std::size_t>(std::max(concurrency, 1));
  const double moved = 2.0 * static_cast<double>(floats * sizeof(float));  // read + write
  const int reps = level == CalibrationLevel::quick ? 3 : 7;
  auto make_call = [=](int) {
    auto src = std::make_shared<std::vector<float>>(floats), dst = std::make_shared<std::vector<float>>(floats);
    fill_pattern(*src);
    auto call = [=] { std::memcpy(dst->data(), src->data(), floats * sizeof(float)); };
    call();  // first touch outside the timing
    return call;
  };
  if (concurrency > 1) return moved / shared_seconds_per_call(concurrency, reps, 2, make_call);
  auto call = make_call(0);
  std::vector<double> rates;
  for (int i = 0; i < reps; ++i) rates.push_back(moved / seconds_of(call));
  return median(rates);
}

double measure_kernel_overhead(CalibrationLevel level) {
  // Kernels of a few elements: what remains is the call, dispatch (OpenBLAS picks a path and
  // packs) and loop set-up that every kernel of a step pays once.
  const int reps = level == CalibrationLevel::quick ? 200 : 2000;
  std::vector<float> a(16, 0.5f), b(16, 0.25f), out(16);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(reps) * 3);
  for (int i = 0; i < reps; ++i) {
    times.push_back(seconds_of([&] { kc::matmul_forward(out.data(), a.data(), b.data(), nullptr, 1, 4, 4); }));
    times.push_back(seconds_of([&] { kc::gelu_forward(out.data(), a.data(), 16); }));
    times.push_back(seconds_of([&] { kc::residual_forward(out.data(), a.data(), b.data(), 16); }));
  }
  return median(times);
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string cpu_device_name() {
  std::string model = "unknown processor";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return "cpu: " + model + " (" + std::to_string(cores) + (cores == 1 ? " core)" : " cores)");
}

Result<est::HardwareProfile> calibrate(const ProbeRequest& asked, const CalibrationOptions& options) {
  const ProbeRequest r = resolved_for_this_process(asked);
  auto stopped = [&] { return options.stop && options.stop->load(); };
  auto cancelled = [] { return Result<est::HardwareProfile>(make_error("calibration", "cancelled")); };
  const std::int64_t world = r.layout.tp * r.layout.pp * std::max<std::int64_t>(r.layout.dp, 1);
  // As many copies at once as the run's ranks can compute at once: no more than its cores. With
  // more ranks than cores the OS shares the cores out, which the time model's processor-sharing
  // simulation (cluster.shared_processors) accounts for; a kernel's own time is measured with
  // every core busy.
  const std::int64_t slots = r.cores > 0 ? std::max<std::int64_t>(r.cores / std::max<std::int64_t>(r.threads_per_rank, 1), 1) : world;
  const int concurrency = static_cast<int>(std::min(world, slots));
  // The engine gives each rank threads_per_rank BLAS threads; measure GEMMs the same way.
  const int saved_blas_threads = kc::blas_threads();
  kc::set_blas_threads(static_cast<int>(r.threads_per_rank));

  est::HardwareProfile p;
  p.device = cpu_device_name();
  p.created_at = utc_now_iso8601();
  for (const auto& shape : calibration_gemm_shapes(r, options.level)) {
    if (stopped()) break;
    p.gemms.push_back(measure_gemm(shape, options.level, concurrency));
  }
  kc::set_blas_threads(saved_blas_threads);
  if (stopped()) return cancelled();
  for (const auto& g : p.gemms) p.peak_flops = std::max(p.peak_flops, g.seconds > 0 ? g.flops() / g.seconds : 0.0);
  p.memory_bandwidth_bytes_per_s = measure_copy_bandwidth(options.level, concurrency);
  p.kernel_overhead_s = measure_kernel_overhead(options.level);
  if (stopped()) return cancelled();
  p.elementwise_bytes_per_s = measure_elementwise(r, options.level, concurrency, p.kernel_overhead_s);
  if (stopped()) return cancelled();
  p.attention.push_back(measure_attention(r, options.level, concurrency));
  p.optimizer_bytes_per_s = measure_optimizer(r, options.level, concurrency);
  if (stopped()) return cancelled();

  // Groups the run forms, plus pairs; messages the run sends (one activation of a micro-batch,
  // one stage's gradients), plus a sweep from latency-bound to bandwidth-bound sizes.
  std::set<std::int64_t> groups{2};
  for (auto g : {r.layout.tp, r.layout.dp, r.layout.pp, world}) if (g >= 2) groups.insert(g);
  std::set<double> sizes = options.level == CalibrationLevel::quick ? std::set<double>{4096.0, 1 << 20}
                                                                     : std::set<double>{1024.0, 16384.0, 262144.0, 1 << 20, 4 << 20, 16 << 20};
  const double activation_bytes = static_cast<double>(r.micro_batch * r.seq_len * r.model.hidden) * 4;
  sizes.insert(activation_bytes);
  if (options.level == CalibrationLevel::full) {
    const double layer_params = 12.0 * static_cast<double>(r.model.hidden * r.model.hidden);  // Narayanan et al. 2021, eq. 2
    sizes.insert(layer_params * static_cast<double>(r.model.layers) / static_cast<double>(r.layout.tp * r.layout.pp) * 4);
  }
  const CollectiveSweep sweep = options.collectives ? options.collectives : CollectiveSweep(measure_collectives);
  auto collectives = sweep({groups.begin(), groups.end()}, {sizes.begin(), sizes.end()}, options.level, options.stop);
  if (!collectives) return collectives.errors();
  p.collectives = std::move(*collectives);
  return p;
}

}  // namespace plansight::probe
