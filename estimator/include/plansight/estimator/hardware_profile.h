// HardwareProfile: efficiencies measured on a real machine by the probe's calibration (GEMM
// throughput by shape and precision, memory bandwidth, collective bus bandwidth by size and
// group), read by the time model so that a prediction for this machine uses its numbers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/enums.h"

namespace plansight::estimator {

struct GemmSample {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  Precision precision = Precision::bf16;
  double seconds = 0;  // one call, median of repetitions
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch); }
};

// A fused attention kernel (scores, causal softmax and the weighted sum of values in one pass,
// as the CPU probe's kernel, llm.c's attention_forward) timed forward and backward at one shape.
// Its time scales with the score products, batch_heads * seq^2 * head_dim.
struct AttentionSample {
  std::int64_t batch_heads = 1, seq = 1, head_dim = 1;  // b * heads on one TP rank, s, d
  double forward_s = 0, backward_s = 0;                 // one call each, median of repetitions
  double work() const { return static_cast<double>(batch_heads) * static_cast<double>(seq) * static_cast<double>(seq) * static_cast<double>(head_dim); }
};

struct CollectiveSample {
  Collective op = Collective::all_reduce;
  std::int64_t ranks = 2;
  double bytes = 0;
  double seconds = 0;
  bool crosses_nodes = false;
};

struct HardwareProfile {
  std::string device;       // e.g. "cpu: AMD EPYC 7B13 (2 threads)" or "NVIDIA H100 80GB HBM3"
  std::string created_at;   // ISO-8601 UTC
  double peak_flops = 0;    // the device's peak used to express efficiencies (0: from the plan's GPU)
  double memory_bandwidth_bytes_per_s = 0;  // measured streaming copy bandwidth (0: unknown)
  double kernel_overhead_s = -1;            // measured per-kernel overhead (< 0: unknown)
  std::vector<GemmSample> gemms;
  std::vector<CollectiveSample> collectives;
  // Measured throughput of element-wise kernels, keyed by kind ("norm_forward",
  // "activation_backward", ...; see elementwise_kind_name() in device_model.h): the bytes the
  // time model charges for the kernel at the calibrated shape over its measured seconds. On a
  // CPU GeLU (tanhf per element) is compute bound, far below the copy bandwidth, so one
  // bandwidth for every kernel underestimates it. A kind absent here falls back to the copy
  // bandwidth; profiles written before this field have none.
  std::map<std::string, double> elementwise_bytes_per_s;
  // Measured fused attention; when present it replaces the GEMMs + softmax costing of standard
  // (non-flash) attention, because the device runs attention as that one kernel.
  std::vector<AttentionSample> attention;
  // The optimizer step's measured rate over the bytes the time model charges for it (AdamW:
  // per parameter, reads and writes of the weights, moments and the gradient read; on a CPU its
  // square root and division make it slower than a copy). 0: unknown, the copy bandwidth.
  double optimizer_bytes_per_s = 0;

  bool empty() const { return gemms.empty() && collectives.empty() && memory_bandwidth_bytes_per_s <= 0 && attention.empty(); }
};

nlohmann::json to_json(const HardwareProfile& profile);
Result<HardwareProfile> hardware_profile_from_json(const nlohmann::json& json);

}  // namespace plansight::estimator
