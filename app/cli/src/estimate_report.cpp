// The human-readable report of `plansight estimate`: the plan in one paragraph, parameters,
// memory of the most loaded GPU and of every stage, FLOPs, time and cost, warnings.
#include "plansight/cli/estimate_report.h"

#include <algorithm>

#include "plansight/cli/format.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

void memory_row(std::ostream& out, const char* label, double bytes) {
  out << "  " << pad_right(label, 22) << pad_left(format_gib(bytes), 14) << "\n";
}

}  // namespace

void print_estimate(std::ostream& out, const est::Plan& plan, const est::Estimate& e) {
  const auto& l = plan.layout;
  const auto& t = plan.training;
  out << "Plan: " << plan.model.name << " on " << plan.cluster.gpus << " x " << plan.cluster.gpu.name;
  if (!plan.cluster.name.empty() && plan.cluster.name != "custom") out << " (" << plan.cluster.name << ")";
  out << "\n";
  out << "  layout     TP " << l.tp << " x PP " << l.pp;
  if (l.vpp > 1) out << " (v " << l.vpp << ")";
  out << " x DP " << e.dp << " x CP " << l.cp;
  if (plan.model.moe.enabled()) out << ", EP " << l.ep << " x ETP " << l.expert_tp() << " (expert-DP " << plan.expert_dp() << ")";
  out << ", ZeRO " << l.zero_stage << (l.sequence_parallel ? ", sequence parallel" : "")
      << (l.tp_overlap ? ", TP comm. overlapped" : "") << (l.ep_overlap ? ", all-to-all overlapped" : "")
      << ", recompute " << est::to_string(l.recompute) << ", schedule " << est::to_string(l.schedule) << "\n";
  if (l.offloads()) {
    out << "  offload   " << (l.offload_optimizer ? " optimizer (CPU step)" : "") << (l.offload_params ? " parameters" : "")
        << (l.offload_activations ? " activations" : "") << " to the host over " << format_fixed(plan.cluster.host_link_bandwidth_bytes_per_s / 1e9, 1)
        << " GB/s per GPU\n";
  }
  out << "  batch      " << t.global_batch << " sequences of " << t.seq_len << " tokens; " << e.micro_batches
      << " micro-batches of " << t.micro_batch << " per pipeline\n";
  out << "  precision  " << est::to_string(t.precision) << " weights, " << est::to_string(t.grad_precision)
      << " gradients, " << est::to_string(t.master_precision) << " master, " << est::to_string(t.optimizer)
      << ", " << est::to_string(t.attention) << " attention\n\n";

  out << "Parameters   " << format_large_count(e.parameters) << " (" << format_count(e.parameters) << ")\n";
  if (e.active_parameters != e.parameters) {
    out << "  active     " << format_large_count(e.active_parameters) << " per token (" << plan.model.moe.top_k << " of "
        << plan.model.moe.experts << " routed experts)\n";
  }
  out << "  as trained " << format_large_count(e.parameters_padded) << " (" << format_count(e.parameters_padded) << ") with ";
  if (e.padded_vocab == plan.model.vocab) {
    out << "the vocabulary unpadded (" << format_count(static_cast<double>(e.padded_vocab)) << ")\n\n";
  } else {
    out << "the vocabulary padded to " << format_count(static_cast<double>(e.padded_vocab)) << " (a multiple of "
        << plan.training.vocab_divisible_by << " x TP " << plan.layout.tp << ")\n\n";
  }

  const auto& peak = e.memory.peak;
  out << "Memory per GPU, most loaded: stage " << e.memory.most_loaded_stage << " of " << l.pp << "\n";
  memory_row(out, "weights", peak.weights_bytes);
  memory_row(out, "gradients", peak.gradients_bytes);
  memory_row(out, "optimizer states", peak.optimizer_bytes);
  memory_row(out, "activations", peak.activations_bytes);
  memory_row(out, "comm. buffers", peak.buffers_bytes);
  memory_row(out, "framework reserve", peak.reserve_bytes);
  out << "  " << pad_right("total", 22) << pad_left(format_gib(peak.total_bytes()), 14) << " of "
      << format_gib(e.memory.capacity_bytes) << (e.memory.fits ? "  fits" : "  DOES NOT FIT") << "\n";
  if (e.memory.host_bytes_per_node > 0) {
    out << "  " << pad_right("host memory per node", 22) << pad_left(format_gib(e.memory.host_bytes_per_node), 14);
    if (e.memory.host_capacity_bytes > 0) {
      out << " of " << format_gib(e.memory.host_capacity_bytes) << (e.memory.host_fits ? "  fits" : "  DOES NOT FIT");
    } else {
      out << " (host memory unknown)";
    }
    out << "\n";
  }
  if (l.pp > 1) {
    // One unit for the whole table: TiB once any stage needs 1024 GiB or more, as format_gib says it.
    double most = 0;
    for (const auto& s : e.memory.stages) most = std::max(most, s.memory.total_bytes());
    const bool tib = most >= 1024.0 * 1024.0 * 1024.0 * 1024.0;
    const double unit = tib ? 1024.0 * 1024.0 * 1024.0 * 1024.0 : 1024.0 * 1024.0 * 1024.0;
    out << "\n  stage layers   weights     grads  optimizer  activations  buffers   reserve     total ("
        << (tib ? "TiB" : "GiB") << ")\n";
    auto g = [unit](double b) { return pad_left(format_fixed(b / unit, 2), 10); };
    for (const auto& s : e.memory.stages) {
      const auto& m = s.memory;
      out << "  " << pad_left(std::to_string(s.stage), 5) << pad_left(std::to_string(s.layers), 7) << g(m.weights_bytes)
          << g(m.gradients_bytes) << g(m.optimizer_bytes) << pad_left(format_fixed(m.activations_bytes / unit, 2), 13)
          << g(m.buffers_bytes) << g(m.reserve_bytes) << g(m.total_bytes()) << "\n";
    }
  }

  out << "\nFLOPs per iteration\n";
  out << "  model      " << format_flops(e.flops.model_per_iteration) << "\n";
  out << "  hardware   " << format_flops(e.flops.hardware_per_iteration) << " (with recomputation)\n";

  out << "\nTime and cost\n";
  const auto& time = e.time;
  if (!time.available) {
    out << "  give --achieved-tflops or --mfu for time and cost\n";
  } else {
    out << "  iteration            " << format_seconds(time.iteration_s)
        << (time.predicted ? (l.pp > 1 ? " (predicted; where the first stage's time goes)" : " (predicted)")
                           : " (from the given throughput)")
        << "\n";
    if (time.predicted) {
      const auto& b = time.breakdown;
      auto part = [&](const char* label, double s) {
        if (s <= 0) return;
        out << "    " << pad_right(label, 19) << pad_left(format_seconds(s), 12) << pad_left(format_fixed(s / time.iteration_s * 100, 1) + "%", 8) << "\n";
      };
      part("compute", b.compute_s);
      part("exposed TP comm.", b.tp_comm_s);
      part("exposed CP comm.", b.cp_comm_s);
      part("exposed PP comm.", b.pp_comm_s);
      part("exposed DP comm.", b.dp_comm_s);
      part("expert all-to-all", b.ep_comm_s);
      part("pipeline bubble", b.bubble_s);
      part("optimizer", b.optimizer_s);
      part("exposed offload", b.offload_s);
      // One definition on every page (schedule_metrics.h): per stage, idle pipeline time / its work.
      if (l.pp > 1) {
        out << "    bubble fraction    " << pad_left(format_fixed(time.bubble_fraction * 100, 1) + "%", 12)
            << " mean over stages, " << format_fixed(time.bubble_fraction_max * 100, 1)
            << "% worst (a stage's idle pipeline time / its work)\n";
      }
      // What one GPU of the first stage sends per iteration, by group, hidden or exposed.
      std::string sent;
      for (auto [group, bytes] : {std::pair{"TP", b.tp_bytes}, std::pair{"CP", b.cp_bytes}, std::pair{"PP", b.pp_bytes},
                                  std::pair{"DP", b.dp_bytes}, std::pair{"EP", b.ep_bytes}}) {
        if (bytes > 0) sent += std::string(sent.empty() ? "" : ", ") + group + " " + format_gib(bytes);
      }
      if (!sent.empty()) out << "  sent per GPU         " << sent << " per iteration\n";
    }
    out << "  throughput           " << format_count(time.tokens_per_s) << " tokens/s, "
        << format_fixed(time.achieved_tflops_per_gpu, 1) << " TFLOP/s per GPU\n";
    out << "  MFU / HFU            " << format_fixed(time.mfu * 100, 1) << "% / " << format_fixed(time.hfu * 100, 1) << "%\n";
    if (t.tokens > 0) {
      out << "  " << pad_right(format_large_count(t.tokens) + " tokens", 21) << format_fixed(time.training_days, 1) << " days, "
          << format_count(time.gpu_hours) << " GPU-hours";
      if (plan.cluster.price_per_gpu_hour > 0) out << ", " << format_count(time.cost) << " " << plan.cluster.currency;
      out << "\n";
    }
  }
  if (!e.warnings.empty()) {
    out << "\nWarnings\n";
    for (const auto& w : e.warnings) out << "  " << w.field << ": " << w.message << "\n";
  }
}

}  // namespace plansight::cli
