// A plan's prediction beside a run that was measured (a probe run) or imported (a trace of a
// real job): the plan's predicted iteration (estimate() then predict_time(), as `plansight
// timeline` draws it) against the run's own timeline, time per phase by step_phases() on both
// (DESIGN §2: one function of a Timeline for every source), and memory per category when the
// run measured it. Shared by `plansight compare RUN --plan FILE.json` and the desktop app's
// Compare page, so both show the same numbers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plansight/cli/step_phases.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/timeline.h"
#include "plansight/store/store.h"

namespace plansight::cli {

struct ComparedValue {
  std::string name;     // "forward", ..., "step"; "weights", ..., "total"
  double predicted = 0;
  double measured = 0;
  bool has_measured = true;
  // predicted / measured - 1 (+0.10: the prediction is 10% above the measurement); none when
  // nothing was measured or the measurement is 0.
  std::optional<double> error() const;
};

// forward, backward, communication, bubble, optimizer ("other" when either side has some),
// then "step" = (predicted_step_s, measured_step_s).
std::vector<ComparedValue> phase_rows(const StepPhases& predicted, const StepPhases& measured, bool has_measured,
                                      double predicted_step_s, double measured_step_s);

// Per category the largest over pipeline stages (predicted) against the run's summary (the
// largest over ranks, as the probe reports it): weights ... reserve, then total.
std::vector<ComparedValue> memory_rows(const estimator::MemoryEstimate& predicted,
                                       const std::map<std::string, std::int64_t>& measured_bytes);

struct PlanRunComparison {
  store::RunRecord run;
  estimator::TimelineSource measured_source = estimator::TimelineSource::measured;  // or imported
  estimator::Plan plan;
  estimator::Estimate estimate;
  estimator::Timeline predicted;  // one iteration of the plan
  estimator::Timeline measured;   // the run's timeline as stored
  StepPhases predicted_phases, measured_phases;
  double predicted_step_s = 0;    // the estimate's iteration time
  double measured_step_s = 0;     // the run's median step when it has one, else its timeline's extent
  bool measured_step_is_median = false;
  std::vector<ComparedValue> phases;  // phase_rows()
  std::vector<ComparedValue> memory;  // memory_rows(); empty when the run measured no memory
};

// Errors: the run does not exist or has neither an imported nor a measured timeline (a saved
// plan has only a prediction), or the plan does not estimate.
Result<PlanRunComparison> compare_run_with_plan(store::Store& db, std::int64_t run_id, const estimator::Plan& plan);

}  // namespace plansight::cli
