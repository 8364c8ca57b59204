// `plansight operators [plan flags] [--layer dense|moe] [--json]`: the operators of one
// transformer layer and of the LM head for one micro-batch on one GPU of the plan, as the time
// model costs them (estimator/operator_report.h): GEMM shapes under TP and sequence parallelism,
// FLOPs, HBM bytes, arithmetic intensity, predicted time, compute or memory bound against the
// GPU's ridge point, achieved FLOP/s and share of the layer's time. The app's Operators page
// shows the same rows and their roofline.
#include <nlohmann/json.hpp>

#include "command_util.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/operator_report.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

std::string pass_text(const est::OperatorCost& op) {
  switch (op.pass) {
    case est::OperatorPass::forward: return "fwd";
    case est::OperatorPass::recompute: return "recomp";
    case est::OperatorPass::backward_input: return op.op_class == est::OperatorClass::gemm ? "bwd dX" : "bwd";
    case est::OperatorPass::backward_weight: return "bwd dW";
  }
  return "?";
}

std::string number(double v) {  // GEMM sizes: whole numbers, else two decimals
  if (v == static_cast<double>(static_cast<long long>(v))) return std::to_string(static_cast<long long>(v));
  return format_fixed(v, 2);
}

std::string shape_text(const est::OperatorCost& op) {
  if (op.op_class != est::OperatorClass::gemm) return "";
  std::string s = number(op.m) + " x " + number(op.n) + " x " + number(op.k);
  if (op.batch != 1) s += " (x" + number(op.batch) + ")";
  return s;
}

// "128x64     1   89%" (tile, waves, tile fill x wave fill), "!" when off alignment; "" for other operators.
std::string tiling_text(const est::GemmTiling& t) {
  if (t.tiles <= 0) return t.aligned ? "" : "!";
  return pad_right(number(t.tile_rows) + "x" + number(t.tile_cols) + (t.aligned ? "" : "!"), 8) + pad_left(number(t.waves), 6) +
         pad_left(format_fixed(100 * t.tile_fill * t.wave_fill, 0) + "%", 6);
}

nlohmann::json pass_json(const est::PassCost& c, double operators_s) {
  const auto comm = [&](auto member) {
    return c.forward.*member + c.backward_input.*member + c.backward_weight.*member + c.recompute.*member;
  };
  return {{"operators_s", operators_s},
          {"time_model",
           {{"forward_s", c.forward.compute_s},
            {"backward_input_s", c.backward_input.compute_s},
            {"backward_weight_s", c.backward_weight.compute_s},
            {"recompute_s", c.recompute.compute_s},
            {"compute_s", est::compute_seconds(c)},
            {"tp_comm_s", comm(&est::PhaseCost::tp_comm_s)},
            {"cp_comm_s", comm(&est::PhaseCost::cp_comm_s)},
            {"ep_comm_s", comm(&est::PhaseCost::ep_comm_s)}}}};
}

nlohmann::json report_json(const est::Plan& plan, const est::OperatorReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    const auto& op = row.op;
    nlohmann::json gemm = nullptr;
    if (op.op_class == est::OperatorClass::gemm) {
      const auto& t = row.tiling;
      gemm = {{"m", op.m}, {"n", op.n}, {"k", op.k}, {"batch", op.batch},
              {"tile", t.tiles > 0 ? nlohmann::json{t.tile_rows, t.tile_cols} : nlohmann::json()},
              {"tiles", t.tiles}, {"waves", t.waves}, {"tile_fill", t.tile_fill}, {"wave_fill", t.wave_fill},
              {"aligned", t.aligned}};
    }
    rows.push_back({{"block", est::to_string(row.block)},
                    {"name", op.name},
                    {"pass", est::to_string(op.pass)},
                    {"class", est::to_string(op.op_class)},
                    {"gemm", gemm},
                    {"flops", op.flops},
                    {"matmul_flops", op.matmul},
                    {"bytes", op.bytes},
                    {"intensity_flops_per_byte", row.intensity_flops_per_byte},
                    {"seconds", op.seconds},
                    {"bound", row.compute_bound ? "compute" : "memory"},
                    {"achieved_flops_per_s", row.achieved_flops_per_s},
                    {"attainable_flops_per_s", row.attainable_flops_per_s},
                    {"share", row.share}});
  }
  return {{"gpu", plan.cluster.gpu.name},
          {"precision", est::to_string(plan.training.precision)},
          {"roofline",
           {{"peak_flops_per_s", r.roofline.peak_flops_per_s},
            {"memory_bytes_per_s", r.roofline.memory_bytes_per_s},
            {"ridge_flops_per_byte", r.roofline.ridge_flops_per_byte()}}},
          {"layer_kind", est::to_string(r.layer_kind)},
          {"padded_vocab", r.padded_vocab},
          {"operators", rows},
          {"layer", pass_json(r.layer, r.layer_operator_s)},
          {"lm_head", pass_json(r.lm_head, r.lm_head_operator_s)}};
}

std::string ms(double seconds) { return format_fixed(seconds * 1e3, 3) + " ms"; }

void print_block(std::ostream& out, const est::OperatorReport& r, est::OperatorBlock block, const std::string& title) {
  out << "\n" << title << "\n";
  out << pad_right("operator", 24) << pad_right("pass", 8) << pad_right("GEMM M x N x K (x batch)", 28) << pad_left("GFLOP", 9)
      << pad_left("MiB", 9) << pad_left("FLOP/B", 9) << pad_left("time us", 10) << "  " << pad_right("bound", 8)
      << pad_left("TFLOP/s", 8) << pad_left("of roof", 8) << pad_left("share", 7) << "  " << pad_right("tile", 8)
      << pad_left("waves", 6) << pad_left("fill", 6) << "\n";
  for (const auto& row : r.rows) {
    if (row.block != block) continue;
    const auto& op = row.op;
    out << pad_right(std::string(op.name), 24) << pad_right(pass_text(op), 8) << pad_right(shape_text(op), 28)
        << pad_left(format_fixed(op.flops / 1e9, 2), 9) << pad_left(format_fixed(op.bytes / (1 << 20), 1), 9)
        << pad_left(format_fixed(row.intensity_flops_per_byte, 1), 9) << pad_left(format_fixed(op.seconds * 1e6, 1), 10)
        << "  " << pad_right(row.compute_bound ? "compute" : "memory", 8)
        << pad_left(format_fixed(row.achieved_flops_per_s / 1e12, 1), 8)
        << pad_left(row.attainable_flops_per_s > 0
                        ? format_fixed(100 * row.achieved_flops_per_s / row.attainable_flops_per_s, 0) + "%"
                        : "-",
                    8)
        << pad_left(format_fixed(100 * row.share, 1) + "%", 7) << "  " << tiling_text(row.tiling) << "\n";
  }
  const est::PassCost& c = block == est::OperatorBlock::layer ? r.layer : r.lm_head;
  const double operators_s = block == est::OperatorBlock::layer ? r.layer_operator_s : r.lm_head_operator_s;
  out << "operators " << ms(operators_s) << "; the time model's compute: " << ms(est::compute_seconds(c)) << " (forward "
      << ms(c.forward.compute_s)
      << (c.recompute.compute_s > 0 ? ", recompute " + ms(c.recompute.compute_s) : std::string())
      << ", backward " << ms(c.backward_input.compute_s + c.backward_weight.compute_s) << ")";
  const double comm = c.forward.tp_comm_s + c.backward_input.tp_comm_s + c.recompute.tp_comm_s + c.forward.cp_comm_s +
                      c.backward_input.cp_comm_s + c.recompute.cp_comm_s + c.forward.ep_comm_s + c.backward_input.ep_comm_s +
                      c.recompute.ep_comm_s;
  if (comm > 0) out << "; plus " << ms(comm) << " of TP/CP/EP communication it waits on";
  out << "\n";
}

}  // namespace

Status run_operators(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (const auto& a : argv) json = json || a == "--json";
  auto args = Args::parse(argv, plan_command_flags({{"--layer", true, "dense|moe"}}));
  if (!args) return report_command_errors(args.errors(), json, out, err);
  if (!args->positionals().empty()) {
    return report_command_errors({make_error(args->positionals()[0], "unexpected argument; see plansight --help")}, json, out, err);
  }
  est::OperatorReportOptions options;
  if (auto layer = args->value("--layer")) {
    if (*layer != "dense" && *layer != "moe") {
      return report_command_errors({make_error("--layer", "value \"" + *layer + "\" is invalid; valid: dense, moe")}, json,
                                   out, err);
    }
    options.layer = *layer == "moe" ? est::LayerKind::moe : est::LayerKind::dense;
  }
  std::vector<Diagnostic> adjustments;
  auto plan = plan_from_args(*args, &adjustments);
  if (!plan) return report_command_errors(plan.errors(), json, out, err);
  print_adjustments(adjustments, err);
  auto report = est::operator_report(*plan, options);
  if (!report) return report_command_errors(report.errors(), json, out, err);
  if (json) {
    nlohmann::json j = report_json(*plan, *report);
    j["plan"] = est::to_json(*plan);
    out << json_text(j) << "\n";
    return Status::ok;
  }
  const auto& p = *plan;
  const auto& roof = report->roofline;
  out << p.model.name << " on " << p.cluster.gpu.name << ", " << est::to_string(p.training.precision) << ": peak "
      << format_fixed(roof.peak_flops_per_s / 1e12, 1) << " TFLOP/s, HBM " << format_fixed(roof.memory_bytes_per_s / 1e9, 0)
      << " GB/s, ridge point " << format_fixed(roof.ridge_flops_per_byte(), 1) << " FLOP/byte\n";
  out << "one micro-batch of " << p.training.micro_batch << " x " << p.training.seq_len << " tokens"
      << (p.layout.cp > 1 ? " (1/" + std::to_string(p.layout.cp) + " of each sequence: CP " + std::to_string(p.layout.cp) + ")"
                          : "")
      << " on one GPU: TP " << p.layout.tp << ", sequence parallelism "
      << (p.layout.sequence_parallel && p.layout.tp > 1 ? "on" : "off") << ", " << est::to_string(p.training.attention)
      << " attention, recomputation " << est::to_string(p.layout.recompute) << "\n";
  if (p.training.achieved_tflops > 0 || p.training.mfu > 0) {
    out << "note: the estimate takes its time from the plan's given throughput; these are the time model's predictions\n";
  }
  print_block(out, *report, est::OperatorBlock::layer,
              std::string(report->layer_kind == est::LayerKind::moe ? "one MoE layer" : "one transformer layer") +
                  " (forward, recomputation, then backward from the last kernel to the first):");
  print_block(out, *report, est::OperatorBlock::lm_head,
              "LM head on the last stage (vocabulary " + std::to_string(report->padded_vocab) + " / TP " +
                  std::to_string(p.layout.tp) + "):");
  out << "\nbound: intensity (FLOP/B) left or right of the ridge point; of roof: achieved FLOP/s over min(peak, "
         "intensity x HBM bandwidth); element-wise FLOPs are nominal (a few per element)\n"
         "tile: the output tile a GEMM is costed with, waves of one tile per SM, fill: the useful share of those "
         "tiles' work (tile x wave quantization); ! : n or k rows off 16-byte alignment, half the Tensor Core rate\n";
  return Status::ok;
}

}  // namespace plansight::cli
