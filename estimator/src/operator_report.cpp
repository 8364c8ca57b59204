// The roofline view of a plan's operators (operator_report.h): rows from operator_costs.cpp
// against the roofs of the DeviceModel the time model builds for the plan (time_model.cpp:
// default_efficiency of the plan's GPU, the plan's precision, the optional profile).
#include "plansight/estimator/operator_report.h"

#include <algorithm>

#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

void add_rows(OperatorReport& report, const DeviceModel& device, const std::vector<OperatorCost>& ops, OperatorBlock block,
              double block_s) {
  for (const auto& op : ops) {
    OperatorRow row;
    row.op = op;
    row.block = block;
    row.intensity_flops_per_byte = op.intensity_flops_per_byte();
    row.compute_bound = report.roofline.compute_bound(row.intensity_flops_per_byte);
    row.achieved_flops_per_s = op.seconds > 0 ? op.flops / op.seconds : 0;
    row.attainable_flops_per_s = report.roofline.attainable_flops_per_s(row.intensity_flops_per_byte);
    row.share = block_s > 0 ? op.seconds / block_s : 0;
    if (op.op_class == OperatorClass::gemm) row.tiling = device.gemm_tiling(op.m, op.n, op.k, op.batch);
    report.rows.push_back(row);
  }
}

double seconds_of(const std::vector<OperatorCost>& ops) {
  double s = 0;
  for (const auto& op : ops) s += op.seconds;
  return s;
}

}  // namespace

double Roofline::attainable_flops_per_s(double intensity) const {
  return std::min(peak_flops_per_s, intensity * memory_bytes_per_s);
}

std::string_view to_string(OperatorBlock b) { return b == OperatorBlock::layer ? "layer" : "lm_head"; }
std::string_view to_string(LayerKind k) { return k == LayerKind::dense ? "dense" : "moe"; }

double compute_seconds(const PassCost& c) {
  return c.forward.compute_s + c.backward_input.compute_s + c.backward_weight.compute_s + c.recompute.compute_s;
}

Result<OperatorReport> operator_report(const Plan& plan, const OperatorReportOptions& options) {
  std::vector<Diagnostic> diagnostics = validate(plan);
  if (has_errors(diagnostics)) {
    std::erase_if(diagnostics, [](const Diagnostic& d) { return d.severity != Severity::error; });
    return diagnostics;
  }
  const bool moe_model = plan.model.moe.enabled();
  const LayerKind kind = options.layer.value_or(moe_model ? LayerKind::moe : LayerKind::dense);
  if (kind == LayerKind::moe && !moe_model) {
    return make_error("layer", "value moe is invalid for " + plan.model.name + ", which has no MoE layers; valid: dense");
  }

  // The device and links exactly as the time model builds them (time_model.cpp, predict_time).
  const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu), options.profile);
  const CommLinks links = plan_links(plan, device.efficiency());
  OperatorReport report;
  report.roofline = {device.peak_flops(), device.hbm_bandwidth_bytes_per_s()};
  report.layer_kind = kind;
  report.padded_vocab = padded_vocab(plan.model.vocab, plan.layout.tp, plan.training.vocab_divisible_by);

  const std::vector<OperatorCost> layer = kind == LayerKind::moe ? moe_layer_operators(plan, device) : layer_operators(plan, device);
  const std::vector<OperatorCost> head = lm_head_operators(plan, device, report.padded_vocab);
  report.layer = kind == LayerKind::moe ? moe_layer_cost(plan, device, links) : layer_cost(plan, device, links);
  report.lm_head = lm_head_cost(plan, device, links, report.padded_vocab);
  report.layer_operator_s = seconds_of(layer);
  report.lm_head_operator_s = seconds_of(head);
  add_rows(report, device, layer, OperatorBlock::layer, report.layer_operator_s);
  add_rows(report, device, head, OperatorBlock::lm_head, report.lm_head_operator_s);
  return report;
}

}  // namespace plansight::estimator
