// LayoutSpec: how the model is split over GPUs. GPUs = TP * PP * DP * CP; TP innermost.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/enums.h"

namespace plansight::estimator {

struct LayoutSpec {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t vpp = 1;   // virtual pipeline stages (model chunks) per pipeline rank
  std::int64_t dp = 0;    // 0: derived as gpus / (tp * pp * cp)
  std::int64_t cp = 1;    // context parallel: sequence split over cp ranks
  bool sequence_parallel = false;
  std::int64_t zero_stage = 0;  // 0 none, 1 optimizer, 2 + gradients, 3 + weights (FSDP)
  Recompute recompute = Recompute::none;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  // Data-parallel gradient reduction overlapped with the backward pass in buckets (PyTorch DDP,
  // Megatron's overlap_grad_reduce) or run after it (Megatron-LM's 2021 "local" DDP).
  bool dp_overlap = true;
  // Optional explicit layers per model chunk, pp * vpp entries in pipeline order
  // (chunk c of rank r is entry c * pp + r). Empty: uniform split.
  std::vector<std::int64_t> stage_layers;
};

}  // namespace plansight::estimator
