// run_throughput.h. Device names: what cudaGetDeviceProperties().name (and nvidia-smi) print,
// e.g. "NVIDIA H100 80GB HBM3" for the SXM5 part and "NVIDIA H100 PCIe" for the PCIe one; the A100
// and V100 names carry the form factor and the memory ("NVIDIA A100-SXM4-80GB", "Tesla
// V100-SXM2-32GB").
#include "plansight/core/run_throughput.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "plansight/estimator/enums.h"
#include "plansight/estimator/presets.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// A whole word of `s` (letters and digits between other characters): "l4" in "nvidia l4", not in
// "nvidia l40s".
bool has_word(const std::string& s, std::string_view word) {
  for (std::size_t at = s.find(word); at != std::string::npos; at = s.find(word, at + 1)) {
    const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1]));
    const std::size_t end = at + word.size();
    const bool ends = end == s.size() || !std::isalnum(static_cast<unsigned char>(s[end]));
    if (starts && ends) return true;
  }
  return false;
}

std::optional<std::string> preset_name(const std::string& name) {
  if (has_word(name, "h200")) return "h200";
  if (has_word(name, "b200")) return "b200";
  if (has_word(name, "h100")) {
    if (has(name, "nvl")) return std::nullopt;  // H100 NVL: 94 GB, its own clocks; no preset
    return has(name, "pcie") ? "h100-pcie" : "h100-sxm";
  }
  if (has_word(name, "a100")) {
    const bool pcie = has(name, "pcie");
    const bool gb80 = has(name, "80gb");
    return std::string("a100-") + (gb80 ? "80gb" : "40gb") + (pcie ? "-pcie" : "-sxm");
  }
  if (has_word(name, "v100")) {
    if (has(name, "pcie")) return std::nullopt;  // PCIe V100s run slower clocks than the SXM2 preset
    return has(name, "32gb") ? "v100-32gb-sxm" : "v100-16gb-sxm";
  }
  if (has_word(name, "l4")) return "l4";
  if (has_word(name, "t4")) return "t4";
  return std::nullopt;
}

}  // namespace

std::optional<est::GpuSpec> datasheet_gpu(std::string_view device) {
  // The probe's names carry a " (sm_90, 132 SMs, 139.8 GiB)" tail: the CUDA name is before it.
  const std::string name = lower(device.substr(0, device.find(" (")));
  const auto preset = preset_name(name);
  if (!preset) return std::nullopt;
  auto gpu = est::find_gpu(*preset);
  if (!gpu) return std::nullopt;
  return *gpu;
}

RunThroughput run_throughput(const est::Plan& plan, const est::Estimate& estimate, double predicted_step_s,
                             double measured_step_s, std::string_view device) {
  RunThroughput t;
  const double tokens = static_cast<double>(plan.training.global_batch) * static_cast<double>(plan.training.seq_len);
  if (predicted_step_s > 0) t.predicted_tokens_per_s = tokens / predicted_step_s;
  if (measured_step_s > 0) t.measured_tokens_per_s = tokens / measured_step_s;
  // Virtual ranks that share GPUs (cluster.shared_processors on a GPU run) count as those GPUs.
  t.gpus = plan.cluster.shared_processors > 0 ? std::min(plan.cluster.shared_processors, plan.cluster.gpus)
                                              : plan.cluster.gpus;
  const auto gpu = datasheet_gpu(device);
  if (!gpu) {
    t.mfu_note = "no MFU: no datasheet peak for \"" + std::string(device) + "\" (a CPU, or a GPU without a preset)";
    return t;
  }
  t.peak_flops_per_gpu = gpu->peak_flops(plan.training.precision);
  if (t.peak_flops_per_gpu <= 0 || t.gpus <= 0) {
    t.mfu_note = "no MFU: the " + gpu->name + " preset has no " + std::string(est::to_string(plan.training.precision)) + " peak";
    return t;
  }
  char peak[160];
  std::snprintf(peak, sizeof peak, "%s datasheet, %s dense %.1f TFLOP/s x %lld GPU%s", gpu->name.c_str(),
                std::string(est::to_string(plan.training.precision)).c_str(), t.peak_flops_per_gpu / 1e12, static_cast<long long>(t.gpus),
                t.gpus == 1 ? "" : "s");
  t.peak_source = peak;
  const double denominator = t.peak_flops_per_gpu * static_cast<double>(t.gpus);
  const double model_flops = estimate.flops.model_per_iteration;
  if (predicted_step_s > 0) t.predicted_mfu = model_flops / (predicted_step_s * denominator);
  if (measured_step_s > 0) t.measured_mfu = model_flops / (measured_step_s * denominator);
  return t;
}

}  // namespace plansight::core
