// predicted_gemm_shares() (predicted_gemm_share.h): a dense and a MoE layer's operators weighted
// by how many layers of each kind the model has, plus the LM head's once.
#include "plansight/core/predicted_gemm_share.h"

#include "plansight/estimator/operator_report.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

// Operator seconds of one pass: all of them, and the GEMMs'.
struct PassSeconds {
  double all_s = 0, gemm_s = 0;
  double share() const { return all_s > 0 ? gemm_s / all_s : 0; }
  PassSeconds& operator+=(const PassSeconds& o) {
    all_s += o.all_s;
    gemm_s += o.gemm_s;
    return *this;
  }
};

struct Passes {
  PassSeconds forward, backward_input, backward_weight, recompute;
  PassSeconds& of(est::OperatorPass p) {
    switch (p) {
      case est::OperatorPass::forward: return forward;
      case est::OperatorPass::backward_input: return backward_input;
      case est::OperatorPass::backward_weight: return backward_weight;
      case est::OperatorPass::recompute: return recompute;
    }
    return forward;
  }
};

// Adds `layers` x the report's layer rows and, when `head`, its LM head rows.
void add_rows(const est::OperatorReport& report, double layers, bool head, Passes& out) {
  for (const est::OperatorRow& row : report.rows) {
    const double k = row.block == est::OperatorBlock::layer ? layers : head ? 1 : 0;
    const bool gemm = row.op.op_class == est::OperatorClass::gemm;
    out.of(row.op.pass) += PassSeconds{k * row.op.seconds, gemm ? k * row.op.seconds : 0};
  }
}

}  // namespace

Result<PhaseGemmShares> predicted_gemm_shares(const est::Plan& plan, const est::HardwareProfile* profile) {
  PhaseGemmShares shares;
  if (plan.training.precision == est::Precision::fp32) return shares;
  const std::int64_t moe_layers = plan.model.moe_layers_in(0, plan.model.layers);
  const std::int64_t dense_layers = plan.model.layers - moe_layers;
  Passes passes;
  bool head = true;  // the LM head once, from whichever report comes first
  for (const auto& [kind, count] : {std::pair{est::LayerKind::dense, dense_layers}, std::pair{est::LayerKind::moe, moe_layers}}) {
    if (count <= 0) continue;
    est::OperatorReportOptions options;
    options.layer = kind;
    options.profile = profile;
    auto report = est::operator_report(plan, options);
    if (!report) return report.errors();
    add_rows(*report, static_cast<double>(count), head, passes);
    head = false;
  }
  PassSeconds backward = passes.backward_input;
  backward += passes.backward_weight;
  shares.forward = passes.forward.share();
  shares.backward = backward.share();
  shares.backward_input = passes.backward_input.share();
  shares.weight_grad = passes.backward_weight.share();
  shares.recompute = passes.recompute.share();
  return shares;
}

}  // namespace plansight::core
