// The Compare page's figures beside the phases for a probe run against its own configuration:
// the device and precision it ran in, tokens/s and MFU (core::run_throughput, the numbers
// `plansight compare RUN` prints), and on a GPU the tensor-core share of kernel time, predicted
// and measured, read off both timelines by the one core::tensor_core_shares().
#pragma once

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/timeline.h"
#include "plansight/gui/run_comparison.h"
#include "plansight/store/store.h"

namespace plansight::gui {

// Sets out.device … out.tensor_core_note. `plan`, `estimate`, `profile`: those `predicted` was
// made with; `measured`: the run's stored timeline, null when it stored none. Steps in seconds:
// the "step" row of the phases (the prediction's iteration, the run's median step).
void add_run_figures(RunComparison& out, const store::RunRecord& run, const estimator::Plan& plan,
                     const estimator::Estimate& estimate, const estimator::HardwareProfile& profile,
                     const estimator::Timeline& predicted, const estimator::Timeline* measured,
                     double predicted_step_s, double measured_step_s);

}  // namespace plansight::gui
