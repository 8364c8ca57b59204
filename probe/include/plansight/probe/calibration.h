// Calibration: measures this machine as the estimator's time model sees a device — GEMM
// throughput at the shapes the requested model runs, streaming memory bandwidth, per-kernel
// overhead, collective bandwidth by message size and group size — into a HardwareProfile.
// On the CPU the ranks of a run are threads sharing the cores, so each measurement runs as many
// concurrent copies as the run has ranks: a rank's number is what it gets while the others work.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/probe/protocol/request.h"

namespace plansight::probe {

// quick: few repetitions and sizes (about a second; tests and every CLI run); full: `--calibrate`.
enum class CalibrationLevel { quick, full };

struct GemmShape {
  std::string name;  // "qkv", "qkv.dgrad", "fc1.wgrad", "square", ...
  std::int64_t m = 0, n = 0, k = 0;  // C[m,n] = A[m,k] B[k,n]
};

// The GEMMs of one micro-batch on one TP rank of `request` (QKV, attention projection, fc1, fc2,
// LM head, each with its two backward shapes as the estimator's layer costs name them), then a
// few squares that anchor the large-GEMM end. Duplicates removed.
std::vector<GemmShape> calibration_gemm_shapes(const ProbeRequest& request, CalibrationLevel level);

// One fp32 GEMM through the CPU kernel (kernels::cpu::matmul_forward), `concurrency` threads each
// running their own copy; seconds per call = median over repetitions and threads.
estimator::GemmSample measure_gemm(const GemmShape& shape, CalibrationLevel level, int concurrency = 1);

// Bytes moved (read + written) per second by one of `concurrency` threads copying a buffer much
// larger than the last-level cache (STREAM's "copy" counts bytes the same way).
double measure_copy_bandwidth(CalibrationLevel level, int concurrency = 1);

// Seconds of one call of a kernel whose work is negligible (median over many calls).
double measure_kernel_overhead(CalibrationLevel level);

// Throughput of the element-wise kernels (elementwise_calibration.cpp) at the shapes of one
// micro-batch on one TP rank of `request`, `concurrency` threads at once: per kind
// ("norm_forward", ... as estimator::elementwise_kind_name) the bytes the time model charges
// for that kernel over its measured seconds less `kernel_overhead_s`, so that the model
// reproduces the measured time at this shape. Softmax is timed through the cross-entropy
// kernel's row-wise softmax (the attention kernel fuses its own).
std::map<std::string, double> measure_elementwise(const ProbeRequest& request, CalibrationLevel level, int concurrency,
                                                  double kernel_overhead_s);

// Collectives over runtime::InProcessWorld: all-reduce, all-gather, reduce-scatter over each of
// `group_sizes` (>= 2) and send/recv between two ranks, for every size in `bytes` (nccl-tests'
// S: the buffer; the gathered output; the scattered input; the message). Stops early with an
// error when `stop` is set.
Result<std::vector<estimator::CollectiveSample>> measure_collectives(const std::vector<std::int64_t>& group_sizes,
                                                                     const std::vector<double>& bytes,
                                                                     CalibrationLevel level,
                                                                     const std::atomic<bool>* stop = nullptr);

// The probe's fused causal attention (kernels::cpu::attention_forward/backward) at the shape of
// one micro-batch on one TP rank, unit-scale inputs, `concurrency` threads at once.
estimator::AttentionSample measure_attention(const ProbeRequest& request, CalibrationLevel level, int concurrency);

// AdamW over one layer's parameters on one TP rank: the bytes the time model charges for it
// (estimator::optimizer_bytes_per_parameter of the probe's fp32 AdamW) per measured second.
double measure_optimizer(const ProbeRequest& request, CalibrationLevel level, int concurrency);

// Measures the collectives of calibrate() for `group_sizes` and message `bytes`.
using CollectiveSweep = std::function<Result<std::vector<estimator::CollectiveSample>>(
    const std::vector<std::int64_t>& group_sizes, const std::vector<double>& bytes, CalibrationLevel level,
    const std::atomic<bool>* stop)>;

struct CalibrationOptions {
  CalibrationLevel level = CalibrationLevel::full;
  const std::atomic<bool>* stop = nullptr;  // cancel between measurements
  // Empty: measure_collectives (rank threads over the in-process communicator). Ranks spread
  // over processes measure between those processes instead (probe/src/mpi).
  CollectiveSweep collectives;
};

// Everything above for `request` (its shapes, its rank count, its groups and message sizes).
// peak_flops is the best GEMM throughput measured, so efficiencies are relative to this machine.
Result<estimator::HardwareProfile> calibrate(const ProbeRequest& request, const CalibrationOptions& options = {});

// "cpu: AMD EPYC (2 cores)": the processor's model name from /proc/cpuinfo and the core count.
std::string cpu_device_name();

}  // namespace plansight::probe
