// LayoutSpec: how the model is split over GPUs. GPUs = TP * PP * DP * CP; TP innermost.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/enums.h"

namespace plansight::estimator {

// The parallel dimensions, as groups of ranks.
enum class Group : std::uint8_t { tp, cp, dp, pp };

// Rank placement, innermost first: consecutive ranks differ in the first dimension. Megatron-LM's
// default puts TP innermost (inside a node, on NVLink), then CP, DP and PP.
using Placement = std::array<Group, 4>;
constexpr Placement kDefaultPlacement = {Group::tp, Group::cp, Group::dp, Group::pp};
std::string to_string(const Placement& placement);     // "tp-cp-dp-pp"
bool parse_placement(const std::string& text, Placement& out);  // false unless a permutation

struct LayoutSpec {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t vpp = 1;   // virtual pipeline stages (model chunks) per pipeline rank
  std::int64_t dp = 0;    // 0: derived as gpus / (tp * pp * cp)
  std::int64_t cp = 1;    // context parallel: sequence split over cp ranks
  // Expert parallelism as Megatron-Core folds it (--expert-model-parallel-size,
  // --expert-tensor-parallel-size): inside one pipeline stage the tp*cp*dp ranks are regrouped
  // as etp x ep x expert-dp for the routed experts; dense parts keep tp/cp/dp.
  std::int64_t ep = 1;
  std::int64_t etp = 0;   // 0: tp (Megatron-Core's default)
  bool sequence_parallel = false;
  std::int64_t zero_stage = 0;  // 0 none, 1 optimizer, 2 + gradients, 3 + weights (FSDP)
  // Offloading to host memory. These live in the layout, beside zero_stage, because they decide
  // where each model state and activation is kept, as the ZeRO stage does (DeepSpeed configures
  // them inside zero_optimization), and the layout search enumerates them with it.
  // ZeRO-Offload (Ren et al. 2021, USENIX ATC'21): fp32 master weights, optimizer states and
  // fp32 gradients of this rank's shard on the host, the optimizer step on the CPU.
  bool offload_optimizer = false;
  // ZeRO-Infinity (Rajbhandari et al. 2021, SC'21): this rank's 16-bit parameter shard on the
  // host, fetched layer by layer; needs zero_stage 3.
  bool offload_params = false;
  // Stored activations (the checkpoints with full recomputation) on the host except the layers
  // in use, as Megatron-Core's CPU offloading and DeepSpeed's cpu_checkpointing keep them.
  bool offload_activations = false;
  Recompute recompute = Recompute::none;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  // Data-parallel gradient reduction overlapped with the backward pass in buckets (PyTorch DDP,
  // Megatron's overlap_grad_reduce) or run after it (Megatron-LM's 2021 "local" DDP).
  bool dp_overlap = true;
  // MoE: the expert all-to-all (dispatch and combine) of one micro-batch runs under the
  // computation of an adjacent micro-batch, as Megatron-Core's "Combined 1F1B"
  // (--overlap-moe-expert-parallel-comm) pairs a forward with a backward; off: exposed
  // (Megatron-Core's default).
  bool ep_overlap = false;
  // Tensor-parallel all-gathers and reduce-scatters (sequence parallelism) split into chunks and
  // run under the layer's linear GEMMs, as Megatron-Core's --tp-comm-overlap does with Transformer
  // Engine's userbuffers (Wang et al., ASPLOS 2023, "Overlap Communication with Dependent
  // Computation via Decomposition"); needs tp > 1 and sequence_parallel. Off: exposed (the default).
  bool tp_overlap = false;
  Placement placement = kDefaultPlacement;
  // Optional explicit layers per model chunk, pp * vpp entries in pipeline order
  // (chunk c of rank r is entry c * pp + r); with schedule dualpipe pp entries, one model copy's
  // stages, which the other copy mirrors. Empty: uniform split.
  std::vector<std::int64_t> stage_layers;

  std::int64_t expert_tp() const { return etp > 0 ? etp : tp; }
  bool offloads() const { return offload_optimizer || offload_params || offload_activations; }
};

// The schedule a layout with `vpp` virtual stages runs when none was chosen: more than one runs
// only interleaved (Narayanan et al. 2021, Sec. 2.2.2); otherwise `current` stays. The one rule
// behind --vpp N, "vpp": N in plan files and the app's virtual-stages field.
// DualPipe and DualPipeV keep their two virtual stages.
inline PipelineSchedule schedule_for_vpp(std::int64_t vpp, PipelineSchedule current) {
  if ((current == PipelineSchedule::dualpipev || current == PipelineSchedule::dualpipe) && vpp == 2) return current;
  return vpp > 1 ? PipelineSchedule::interleaved : current;
}

// The virtual stages a schedule chosen without them runs: DualPipeV's V and DualPipe's two model
// copies have two chunks per rank (pipeline_schedule.h); leaving them for a schedule of one chunk
// per rank goes back to one. The rule behind --schedule dualpipe(v), "schedule": "dualpipe(v)" in
// plan files and the app's field.
inline std::int64_t vpp_for_schedule(PipelineSchedule schedule, PipelineSchedule before, std::int64_t vpp) {
  const auto two_chunks = [](PipelineSchedule s) { return s == PipelineSchedule::dualpipev || s == PipelineSchedule::dualpipe; };
  if (two_chunks(schedule)) return 2;
  if (two_chunks(before) && schedule != PipelineSchedule::interleaved) return 1;
  return vpp;
}

}  // namespace plansight::estimator
