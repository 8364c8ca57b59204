// ProbeRequest: what a probe run executes — a small GPT model with a parallel layout, a number
// of training steps, the data and the device. The first part of the probe protocol (events.h):
// the app builds one and writes it with to_json, plansight-probe reads it with
// probe_request_from_json, and both refuse a bad one with the same errors, naming the field
// (probe/README.md documents the fields).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/layout_spec.h"
#include "plansight/estimator/model_spec.h"

namespace plansight::probe {

enum class Device { cpu, cuda, automatic };
enum class DataSource { synthetic, corpus };
// What the model computes in: fp32 (strict fp32 GEMMs), tf32 (fp32 storage, TF32 tensor-core
// GEMMs; NVIDIA A100 whitepaper), bf16 or fp16 (16-bit activations and compute weights, fp32
// master weights, gradients and optimizer states: Micikevicius et al. 2018). The CPU runs fp32.
enum class Precision { fp32, tf32, bf16, fp16 };
const char* to_string(Precision p);

struct ProbeRequest {
  estimator::ModelSpec model;    // GPT-2 style: LayerNorm, GeLU MLP, learned positions, tied head
  estimator::LayoutSpec layout;  // tp, pp, vpp, dp, zero_stage, recompute, schedule, sequence_parallel
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1;
  std::int64_t seq_len = 64;
  std::int64_t steps = 10;
  std::int64_t warmup_steps = 1;   // steps run before timing starts
  double learning_rate = 3e-4;
  // The learning rate rises linearly to learning_rate over the first lr_warmup_steps steps
  // (learning_rate_at()); 0: constant from the first step.
  std::int64_t lr_warmup_steps = 0;
  double weight_decay = 0.0;
  std::uint64_t seed = 1234;
  DataSource data = DataSource::synthetic;
  Device device = Device::cpu;
  Precision precision = Precision::fp32;
  std::int64_t threads_per_rank = 1;
  // CPU cores the ranks share; 0: all the probe process may run on (plansight-probe resolves
  // it before it starts, and its started event carries the number used); fewer confines the
  // rank threads to that many.
  std::int64_t cores = 0;
  bool trace = true;               // record a measured Timeline of the last step
  bool calibrate = false;          // also run the GEMM and collective sweeps -> HardwareProfile
  // Also read tensor-core use from hardware counters, per kernel, on the last warm-up step
  // (CUPTI range profiler, kernel replay), each kernel's duration with them, beside the
  // kernel-name rules on the same kernels. Needs device cuda (or auto) and trace false (the
  // counters and the activity tracer are not used in one process); a GPU run says in its report
  // why counters were not read.
  bool tensor_core_counters = false;
};

// Named sizes: "tiny" (2 layers, 64 wide), "small" (4 layers, 128 wide), "gpt2-124m".
Result<estimator::ModelSpec> probe_model(const std::string& name);

nlohmann::json to_json(const ProbeRequest& request);

// The learning rate of step `step` (1-based): learning_rate x min(1, step / lr_warmup_steps),
// the linear "gradual warmup" of Goyal et al. 2017 (Sec. 2.2) that GPT-2/3 training uses (Brown
// et al. 2020, Appendix B: linear warm-up over the first 375 M tokens).
double learning_rate_at(const ProbeRequest& request, std::int64_t step);
// Reads and checks a request: unknown keys, values out of range, and the estimator's own rules
// on the plan it describes (estimator::validate), each error naming its field. Machine-free:
// the same answer in the app and in the probe.
Result<ProbeRequest> probe_request_from_json(const nlohmann::json& json);

}  // namespace plansight::probe
