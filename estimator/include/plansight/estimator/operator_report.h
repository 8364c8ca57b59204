// A plan's operators on one GPU as a roofline (Williams, Waterman and Patterson 2009): each
// operator of one transformer layer and of the LM head (operator_costs.h) with its arithmetic
// intensity, whether it sits left (memory bound) or right (compute bound) of the GPU's ridge
// point, the FLOP/s it achieves in the time model's prediction and its share of its block's time;
// beside them what the time model charges the layer and the head (layer_costs.h), which the
// operators' seconds add up to. The CLI's `operators` command and the app's Operators page show it.
#pragma once

#include <optional>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/operator_costs.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// The roofs of one GPU in the plan's precision: its datasheet peak and HBM bandwidth.
struct Roofline {
  double peak_flops_per_s = 0;
  double memory_bytes_per_s = 0;
  // Peak / bandwidth: operators of lower intensity cannot reach the peak (memory bound).
  double ridge_flops_per_byte() const { return memory_bytes_per_s > 0 ? peak_flops_per_s / memory_bytes_per_s : 0; }
  // min(peak, intensity x bandwidth): the most an operator of that intensity can achieve.
  double attainable_flops_per_s(double intensity_flops_per_byte) const;
  bool compute_bound(double intensity_flops_per_byte) const { return intensity_flops_per_byte >= ridge_flops_per_byte(); }
};

enum class OperatorBlock : std::uint8_t { layer, lm_head };
enum class LayerKind : std::uint8_t { dense, moe };
std::string_view to_string(OperatorBlock b);  // "layer", "lm_head"
std::string_view to_string(LayerKind k);      // "dense", "moe"

struct OperatorRow {
  OperatorCost op;
  OperatorBlock block = OperatorBlock::layer;
  double intensity_flops_per_byte = 0;
  bool compute_bound = false;          // against the ridge point
  double achieved_flops_per_s = 0;     // op.flops / op.seconds
  double attainable_flops_per_s = 0;   // the roof above its intensity
  double share = 0;                    // of its block's operator seconds (0..1)
  GemmTiling tiling;                   // GEMMs: the tile, tiles and waves it is costed with
};

struct OperatorReport {
  Roofline roofline;
  LayerKind layer_kind = LayerKind::dense;
  std::int64_t padded_vocab = 0;  // the LM head's vocabulary (padded as the plan trains it)
  std::vector<OperatorRow> rows;  // the layer's, then the LM head's
  // What the time model charges one layer (layer_cost, or moe_layer_cost for a MoE layer) and
  // the LM head (lm_head_cost), communication included.
  PassCost layer, lm_head;
  double layer_operator_s = 0, lm_head_operator_s = 0;  // sums of the rows' seconds
};

// The seconds a PassCost's kernels take: forward, backward (input and weight) and recompute.
double compute_seconds(const PassCost& cost);

struct OperatorReportOptions {
  std::optional<LayerKind> layer;            // default: MoE when the model has MoE layers
  const HardwareProfile* profile = nullptr;  // measured efficiencies, as the time model takes them
};

// Errors: the plan's validation errors; "layer" when a MoE layer is asked of a dense model.
Result<OperatorReport> operator_report(const Plan& plan, const OperatorReportOptions& options = {});

}  // namespace plansight::estimator
