// The advisor's rules. Thresholds: Tensor Cores want GEMM dimensions in multiples of 8 (fp16)
// and run best at multiples of 64 (NVIDIA Matrix Multiplication Background User's Guide,
// Sec. 2.2; docs/time-model-sources.md item 1); bubble and exposed-communication limits of 10%
// follow the guidance for when a layout change pays off.
#include "plansight/estimator/advisor.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", f * 100);
  return buf;
}

std::int64_t round_up(std::int64_t v, std::int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

void check_dimension(std::vector<Diagnostic>& out, const char* field, const char* what, std::int64_t value,
                     std::int64_t per_rank) {
  if (per_rank % 8 != 0) {
    out.push_back(make_warning(field, std::string(what) + " of " + std::to_string(per_rank) +
                                          " per GPU is not a multiple of 8: GEMMs fall off Tensor Cores' fast paths"));
  } else if (per_rank % 64 != 0 && value > 1024) {
    out.push_back(make_warning(field, std::string(what) + " of " + std::to_string(per_rank) +
                                          " per GPU is not a multiple of 64, which GEMM tiles prefer"));
  }
}

}  // namespace

std::vector<Diagnostic> advise(const Plan& plan, const Estimate& e) {
  std::vector<Diagnostic> out;
  const auto& m = plan.model;
  const auto& l = plan.layout;

  // Vocabulary: Megatron pads it to training.vocab_divisible_by (128) * TP; other frameworks
  // use it as is, and then the LM head's GEMMs run unaligned (device_model.cpp's 16-byte rule).
  // Once padding makes each GPU's logits columns a multiple of 8, the GEMMs are aligned and the
  // vocabulary itself needs no change.
  if (m.vocab % 64 != 0) {
    const std::int64_t per_rank = e.padded_vocab / std::max<std::int64_t>(l.tp, 1);
    if (per_rank % 8 != 0) {
      out.push_back(make_warning("model.vocab", "value " + std::to_string(m.vocab) + " runs as " +
                                                    std::to_string(per_rank) +
                                                    " logits columns per GPU, not a multiple of 8: the LM head's GEMMs "
                                                    "fall off Tensor Cores' fast path; pad it to " +
                                                    std::to_string(round_up(m.vocab, 64)) +
                                                    " or set training.vocab_divisible_by (Megatron's 128 pads to " +
                                                    std::to_string(padded_vocab(m.vocab, l.tp, 128)) + ")"));
    }
  }
  if (l.tp > 0) {
    check_dimension(out, "model.hidden", "hidden size", m.hidden, m.hidden);
    check_dimension(out, "model.ffn_hidden", "MLP width", m.ffn_hidden, m.ffn_hidden / l.tp);
    check_dimension(out, "model.head_dim", "head dimension", m.effective_head_dim(), m.effective_head_dim());
  }
  if (l.placement[0] != Group::tp && l.tp > 1) {
    out.push_back(make_warning("layout.placement", "value " + to_string(l.placement) +
                                                       " does not put TP innermost: tensor-parallel collectives run every "
                                                       "layer and belong on NVLink; tp-cp-dp-pp is Megatron's order"));
  }
  if (l.tp > plan.cluster.gpus_per_node) {
    out.push_back(make_warning("layout.tp", "value " + std::to_string(l.tp) + " spans nodes (" +
                                                std::to_string(plan.cluster.gpus_per_node) +
                                                " GPUs per node): every layer's collectives cross the network; keep "
                                                "tp <= gpus_per_node and use pp for the rest"));
  }

  const auto& t = e.time;
  if (t.predicted && t.bubble_fraction > 0.10) {
    out.push_back(make_warning("layout.schedule", "pipeline bubble is " + percent(t.bubble_fraction) +
                                                      " of the pipeline work (mean over stages): raise micro-batches per pipeline (now " +
                                                      std::to_string(e.micro_batches) + "), interleave (vpp > 1) or use zb-h1"));
  }
  if (t.predicted && t.iteration_s > 0 && t.breakdown.dp_comm_s > 0.10 * t.iteration_s) {
    out.push_back(make_warning("layout.dp_overlap", "exposed data-parallel communication is " +
                                                        percent(t.breakdown.dp_comm_s / t.iteration_s) +
                                                        " of the iteration: overlap it with backward (dp_overlap), "
                                                        "raise the batch, or keep DP groups inside nodes"));
  }
  if (t.predicted && t.iteration_s > 0 && t.breakdown.tp_comm_s > 0.25 * t.iteration_s) {
    out.push_back(make_warning("layout.tp", "exposed tensor-parallel communication is " +
                                                percent(t.breakdown.tp_comm_s / t.iteration_s) +
                                                (l.tp_overlap          ? " of the iteration even with tp_overlap: lower tp, or keep the "
                                                                         "TP group inside a node"
                                                 : l.sequence_parallel ? " of the iteration: lower tp, or overlap it with the GEMMs (tp_overlap, "
                                                                         "Megatron-Core's --tp-comm-overlap)"
                                                                       : " of the iteration: lower tp, or use sequence parallelism and "
                                                                         "overlap its collectives with the GEMMs (tp_overlap)")));
  }

  if (t.predicted && t.iteration_s > 0 && t.breakdown.ep_comm_s > 0.25 * t.iteration_s) {
    // The all-to-all crosses NICs once the EP group (ep ranks, etp apart) spans nodes
    // (moe_layer_costs.cpp); inside a node it runs at NVLink speed.
    const bool spans_nodes = l.ep * l.expert_tp() > plan.cluster.gpus_per_node;
    out.push_back(make_warning("layout.ep", "the expert all-to-all is " + percent(t.breakdown.ep_comm_s / t.iteration_s) +
                                                " of the iteration" +
                                                (spans_nodes ? ": ep*etp = " + std::to_string(l.ep * l.expert_tp()) +
                                                                   " spans nodes of " + std::to_string(plan.cluster.gpus_per_node) +
                                                                   " GPUs; an EP group inside a node uses NVLink"
                                                             : ": a smaller ep keeps more tokens on their own GPU")));
  }

  // Micro-batch: the MLP's first GEMM should run near the device's large-GEMM rate.
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
  const double tokens = static_cast<double>(plan.training.micro_batch) * static_cast<double>(plan.training.seq_len) /
                        static_cast<double>(l.cp);
  const double n = static_cast<double>(m.ffn_hidden) * (m.gated_mlp ? 2.0 : 1.0) / static_cast<double>(l.tp);
  const double k = static_cast<double>(m.hidden);
  const double seconds = device.gemm_seconds(tokens, n, k);
  const double best = device.peak_flops() * device.efficiency().gemm_peak_fraction / device.efficiency().in_step_slowdown;
  if (seconds > 0 && best > 0 && 2 * tokens * n * k / seconds < 0.6 * best) {
    out.push_back(make_warning("training.micro_batch",
                               "GEMMs of " + std::to_string(static_cast<long long>(tokens)) + " tokens run at " +
                                   percent(2 * tokens * n * k / seconds / best) +
                                   " of the GPU's large-GEMM rate: a larger micro-batch keeps Tensor Cores busy"));
  }
  return out;
}

}  // namespace plansight::estimator
