// The Plan of a stored probe run (see probe_plan.h). The device numbers all come from the
// run's own calibration; nothing here is a datasheet figure.
#include "plansight/core/probe_plan.h"

#include <algorithm>
#include <cmath>

#include <unistd.h>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/json_reader.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

// Ring steps of one collective, as collective_seconds() counts them inside a node.
double ring_steps(est::Collective op, double n) {
  switch (op) {
    case est::Collective::all_reduce: return 2 * (n - 1);
    case est::Collective::all_gather:
    case est::Collective::reduce_scatter: return n - 1;
    case est::Collective::broadcast: return std::ceil(std::log2(std::max(n, 2.0)));
    case est::Collective::send_recv: return 1;
  }
  return 1;
}

// "cuda: NVIDIA H100 80GB HBM3 (sm_90, 79.2 GiB)" (the probe's CUDA device name) -> bytes; 0
// when the name carries no memory size.
double gpu_memory_bytes(const std::string& device) {
  const auto comma = device.rfind(", ");
  const auto gib = device.rfind(" GiB)");
  if (comma == std::string::npos || gib == std::string::npos || gib < comma) return 0;
  try {
    return std::stod(device.substr(comma + 2, gib - comma - 2)) * static_cast<double>(1LL << 30);
  } catch (const std::exception&) {
    return 0;
  }
}

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 16.0 * (1 << 30);
}

}  // namespace

FittedLink fit_collective_link(const est::HardwareProfile& profile) {
  // Weighted least squares for t_i = a x_i + b y_i (x: ring steps, y: bus bytes), a, b >= 0.
  double sxx = 0, sxy = 0, syy = 0, sxt = 0, syt = 0;
  for (const auto& s : profile.collectives) {
    if (s.seconds <= 0 || s.bytes <= 0) continue;
    const double n = static_cast<double>(s.ranks);
    const double w = 1.0 / (s.seconds * s.seconds);
    const double x = ring_steps(s.op, n), y = est::bus_factor(s.op, s.ranks) * s.bytes;
    sxx += w * x * x, sxy += w * x * y, syy += w * y * y, sxt += w * x * s.seconds, syt += w * y * s.seconds;
  }
  FittedLink link;
  if (syy <= 0) return link;
  const double det = sxx * syy - sxy * sxy;
  double a = det > 0 ? (sxt * syy - syt * sxy) / det : -1;
  double b = det > 0 ? (syt * sxx - sxt * sxy) / det : 0;
  if (a < 0) {  // no measurable latency: bandwidth alone
    a = 0;
    b = syt / syy;
  } else if (b <= 0) {  // no measurable bandwidth cost: latency alone
    a = sxx > 0 ? sxt / sxx : 0;
    b = 0;
  }
  link.latency_s = a;
  // A copy that cost nothing measurable: memory-speed, as far as the model can tell.
  link.bandwidth_bytes_per_s = b > 0 ? 1.0 / b : std::max(profile.memory_bandwidth_bytes_per_s, 1e9);
  return link;
}

std::int64_t launched_processes(const nlohmann::json& device_report) {
  if (!device_report.is_object()) return 1;
  const auto launch = device_report.find("launch");
  if (launch == device_report.end() || !launch->is_object()) return 1;
  const auto processes = launch->find("processes");
  return processes != launch->end() && processes->is_number_integer() ? std::max<std::int64_t>(processes->get<std::int64_t>(), 1) : 1;
}

Result<est::Plan> plan_of_probe_run(const nlohmann::json& request, const est::HardwareProfile& profile,
                                    std::int64_t processes) {
  if (!request.is_object() || !request.contains("model") || !request.contains("layout")) {
    return make_error("plan", "the run has no probe request (model, layout); it was not made by plansight probe");
  }
  std::vector<Diagnostic> errors;
  est::Plan plan;
  est::JsonReader in(request, "", errors);
  plan.model = est::ModelSpec{};
  if (auto model = in.child("model")) est::read_model(*model, plan.model);
  if (auto layout = in.child("layout")) est::read_layout(*layout, plan.layout);
  auto& t = plan.training;
  in.read("micro_batch", t.micro_batch, 1);
  in.read("global_batch", t.global_batch, 1);
  in.read("seq_len", t.seq_len, 1);
  std::string device = "cpu", precision = "fp32";
  if (in.has("device")) in.read("device", device);
  if (in.has("precision")) in.read("precision", precision);
  if (!errors.empty()) return errors;
  // A GPU run: its profile carries the GPU's name (probe_main.cpp names it after the result).
  const bool on_gpu = profile.device.rfind("cuda", 0) == 0 || device == "cuda";
  // The probe's kernels: AdamW with two fp32 moments, attention that keeps the full score matrix
  // (llm.c's attention_forward), no framework reserve. fp32 everywhere, or on a GPU the request's
  // precision: bf16/fp16 compute copies with fp32 gradients and an fp32 master copy (param_unit.h).
  t.precision = precision == "bf16" ? est::Precision::bf16
                : precision == "fp16" ? est::Precision::fp16
                : precision == "tf32" ? est::Precision::tf32
                                      : est::Precision::fp32;
  t.grad_precision = est::Precision::fp32;
  const bool mixed = t.precision == est::Precision::bf16 || t.precision == est::Precision::fp16;
  t.master_precision = mixed ? est::MasterPrecision::fp32 : est::MasterPrecision::none;
  t.optimizer = est::Optimizer::adam;
  t.attention = est::AttentionKernel::standard;
  t.causal_attention_flops = false;
  t.reserve_fixed_bytes = 0;
  t.fragmentation = 0;
  t.zero3_prefetch = false;  // ZeRO-3: each layer gathers its parameters when it starts (param_unit.cpp)
  t.loss_in_place = true;     // the head's softmax and its gradient overwrite the logits (embedding_head.cpp)
  // The probe's DP buckets are one layer's gradients, reduced in place (probe/src/grad_sync.h):
  // 12h^2 + 13h parameters of a GPT-2 layer (Narayanan et al. 2021, eq. 2, with biases), split by TP.
  const double h = static_cast<double>(plan.model.hidden);
  t.dp_bucket_bytes = (12 * h * h + 13 * h) * 4 / static_cast<double>(std::max<std::int64_t>(plan.layout.tp, 1));

  const std::int64_t world = plan.layout.tp * plan.layout.pp * std::max<std::int64_t>(plan.layout.dp, 1);
  auto& c = plan.cluster;
  c.name = "probe";
  c.source = "measured by plansight-probe's calibration";
  c.gpu.name = on_gpu ? profile.device : "cpu";
  c.gpu.source = profile.device;
  // The calibration measured this device; the fractions it did not measure are the defaults
  // for an unmeasured GPU (no preset describes "cpu" or a driver's device name).
  c.gpu.efficiency = est::GpuEfficiency{};
  const double gpu_memory = on_gpu ? gpu_memory_bytes(profile.device) : 0;
  c.gpu.memory_bytes = static_cast<std::int64_t>(gpu_memory > 0 ? gpu_memory : physical_memory_bytes());
  // On a CPU the calibrated peak stands for every precision. A GPU's differ by an order of
  // magnitude (fp32 on CUDA cores, the others on tensor cores): each precision's peak is the
  // fastest GEMM measured in it, the overall peak only where none was; the HardwareProfile's
  // GEMM samples carry the per-shape throughput the time model uses.
  c.gpu.peak_fp32_flops = profile.peak_flops;
  if (on_gpu) {
    const auto peak_of = [&](est::Precision wanted) {
      double best = 0;
      for (const auto& g : profile.gemms) {
        if (g.precision == wanted && g.seconds > 0) best = std::max(best, g.flops() / g.seconds);
      }
      return best > 0 ? best : profile.peak_flops;
    };
    c.gpu.peak_fp32_flops = peak_of(est::Precision::fp32);
    c.gpu.peak_tf32_flops = peak_of(est::Precision::tf32);
    c.gpu.peak_bf16_flops = peak_of(est::Precision::bf16);
    c.gpu.peak_fp16_flops = peak_of(est::Precision::fp16);
  }
  c.gpu.hbm_bandwidth_bytes_per_s = profile.memory_bandwidth_bytes_per_s;
  c.gpus = world;
  c.gpus_per_node = world;  // every rank is a thread of one process: one "node"
  // The cores the rank threads shared (requests before this field: as many as threads); a rank
  // with k BLAS threads takes k of them.
  std::int64_t cores = 0, threads_per_rank = 1;
  in.read("cores", cores, std::int64_t{0});
  in.read("threads_per_rank", threads_per_rank, std::int64_t{1});
  if (!errors.empty()) return errors;
  c.shared_processors = cores > 0 ? std::max<std::int64_t>(cores / threads_per_rank, 1) : 0;
  // Virtual ranks on one GPU share it: the GPU runs one rank's kernel at a time (their kernels
  // each fill the SMs), so the simulation gives them one shared processor, the GPU counterpart
  // of rank threads sharing CPU cores. Under a launcher each process has a GPU of its own: the
  // ranks share that many, or none with a process per rank (NCCL, one GPU each).
  if (on_gpu) {
    const std::int64_t gpus = std::max<std::int64_t>(processes, 1);
    c.shared_processors = world > gpus ? gpus : 0;
  }
  // The time model multiplies the link by its achievable fraction; the fit already is what was
  // achieved, so divide that fraction back out.
  const FittedLink link = fit_collective_link(profile);
  const double fraction = est::default_efficiency(c.gpu).nvlink_fraction;
  c.intra_node_bandwidth_bytes_per_s = fraction > 0 ? link.bandwidth_bytes_per_s / fraction : link.bandwidth_bytes_per_s;
  c.intra_node_latency_s = link.latency_s;
  c.inter_node_bandwidth_bytes_per_s = c.intra_node_bandwidth_bytes_per_s;
  c.inter_node_latency_s = link.latency_s;
  return plan;
}

}  // namespace plansight::core
