// Helpers for validation tests: GPT-style models as the papers define them, and a check that a
// computed value reproduces a printed one at the printed precision (rounded or truncated, since
// several published tables truncate).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "plansight/estimator/plan.h"
#include "plansight/estimator/presets.h"

namespace plansight::testing {

// GPT-style decoder as in Narayanan et al. 2021 / Korthikanti et al. 2022: 4h MLP with GeLU,
// biases everywhere, LayerNorm, learned positions, tied embeddings, dropout.
inline estimator::ModelSpec gpt_model(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                      std::int64_t vocab = 51200, std::int64_t seq = 2048) {
  estimator::ModelSpec m;
  m.name = "gpt-" + std::to_string(layers) + "x" + std::to_string(hidden);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.max_seq_len = seq;
  return m;
}

// A plan with an 80 GiB GPU of 312 TFLOP/s fp16 (A100-80GB SXM datasheet) and the given model.
inline estimator::Plan a100_plan(const estimator::ModelSpec& model, std::int64_t gpus) {
  estimator::Plan p;
  p.model = model;
  p.cluster.gpu.name = "a100-80gb-sxm";
  p.cluster.gpu.efficiency = estimator::find_gpu("a100-80gb-sxm")->efficiency;  // its preset's measured fractions
  p.cluster.gpu.memory_bytes = 80LL << 30;
  p.cluster.gpu.peak_fp16_flops = 312e12;
  p.cluster.gpu.peak_bf16_flops = 312e12;
  p.cluster.gpu.peak_tf32_flops = 156e12;
  p.cluster.gpu.peak_fp32_flops = 19.5e12;
  p.cluster.gpus = gpus;
  p.training.precision = estimator::Precision::fp16;
  p.training.grad_precision = estimator::Precision::fp16;
  p.training.attention = estimator::AttentionKernel::standard;
  return p;
}

// True when `printed` (as text, e.g. "35.6") equals `value` rounded or truncated to the
// printed number of decimals.
inline bool matches_printed(double value, const std::string& printed) {
  const auto dot = printed.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
  const double scale = std::pow(10.0, decimals);
  const double target = std::stod(printed);
  const double rounded = std::round(value * scale) / scale;
  const double truncated = std::trunc(value * scale) / scale;
  const double eps = 1e-9 * std::max(1.0, std::fabs(target));
  return std::fabs(rounded - target) < eps || std::fabs(truncated - target) < eps;
}

}  // namespace plansight::testing
