// run_plan_mismatches(): does the plan describe the job the run ran? A probe run stores its
// request (model, layout, batch) and is checked field by field; an imported trace records only
// its ranks. Either way a step predicted more than 3x away from the measured one is called out:
// the estimator's step errors on the probe's 20 benchmark layouts stay within -14 %..+2 %
// (bench/results/probe-accuracy-cpu.txt), so such a gap says "another job", not "a bad prediction".
#include <cstdio>
#include <string>

#include "plansight/core/format.h"
#include "plansight/core/plan_run_comparison.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

constexpr double kUnrelatedStepRatio = 3.0;

struct Field {
  const char* name;
  std::int64_t run_value;
  std::int64_t plan_value;
};

std::int64_t int_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}

}  // namespace

std::vector<std::string> run_plan_mismatches(const store::RunRecord& run, const est::Plan& plan,
                                             const est::Estimate& estimate, double predicted_step_s,
                                             double measured_step_s) {
  std::vector<std::string> out;
  if (run.kind == store::RunKind::probe && run.plan && run.plan->is_object()) {
    const nlohmann::json& request = *run.plan;
    const nlohmann::json model = request.value("model", nlohmann::json::object());
    const nlohmann::json layout = request.value("layout", nlohmann::json::object());
    const Field fields[] = {
        {"layers", int_at(model, "layers"), plan.model.layers},
        {"hidden", int_at(model, "hidden"), plan.model.hidden},
        {"heads", int_at(model, "heads"), plan.model.heads},
        {"ffn_hidden", int_at(model, "ffn_hidden"), plan.model.ffn_hidden},
        {"vocab", int_at(model, "vocab"), plan.model.vocab},
        {"tp", int_at(layout, "tp"), plan.layout.tp},
        {"pp", int_at(layout, "pp"), plan.layout.pp},
        {"dp", int_at(layout, "dp"), estimate.dp},
        {"seq_len", int_at(request, "seq_len"), plan.training.seq_len},
        {"micro_batch", int_at(request, "micro_batch"), plan.training.micro_batch},
        {"global_batch", int_at(request, "global_batch"), plan.training.global_batch},
    };
    std::string differing;
    for (const auto& f : fields) {
      if (f.run_value < 0 || f.run_value == f.plan_value) continue;
      if (!differing.empty()) differing += ", ";
      differing += std::string(f.name) + " " + std::to_string(f.run_value) + " vs " + std::to_string(f.plan_value);
    }
    if (!differing.empty()) {
      out.push_back("the run and the plan differ (run vs plan): " + differing +
                    "; the comparison sets two different jobs side by side");
    }
  } else if (run.summary) {
    const auto it = run.summary->metrics.find("ranks");
    if (it != run.summary->metrics.end() && it->second > static_cast<double>(plan.cluster.gpus)) {
      out.push_back("the trace holds " + std::to_string(static_cast<std::int64_t>(it->second)) + " ranks but the plan has " +
                    std::to_string(plan.cluster.gpus) + " GPUs: the plan cannot describe the traced job");
    }
  }
  if (predicted_step_s > 0 && measured_step_s > 0) {
    const double ratio = predicted_step_s / measured_step_s;
    if (ratio > kUnrelatedStepRatio || ratio < 1 / kUnrelatedStepRatio) {
      char times[32];
      std::snprintf(times, sizeof times, "%.1fx", ratio >= 1 ? ratio : 1 / ratio);
      out.push_back("the predicted step (" + format_seconds(predicted_step_s) + ") is " + times +
                    (ratio >= 1 ? " longer than" : " shorter than") + " the measured one (" +
                    format_seconds(measured_step_s) +
                    "): check that the plan describes this run (model, layout, batch, GPUs)");
    }
  }
  return out;
}

}  // namespace plansight::core
