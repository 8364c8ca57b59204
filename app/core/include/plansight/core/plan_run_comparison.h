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

#include "plansight/core/step_phases.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/timeline.h"
#include "plansight/store/store.h"

namespace plansight::core {

// A phase below this share of the measured step, predicted and measured alike, has no relative
// error of its own: on a 2 ms CPU step, 1 us of communication against 0 predicted reads -100 %
// while it moves the step by 0.05 %. Such a phase is judged by its difference as a share of the
// step (of_step), which is also what the phases' errors add up to in the step's error. 5 %: the
// smallest phase a reader of a step's breakdown (a bar of the Timeline page) can see.
inline constexpr double kSmallPhaseShare = 0.05;

struct ComparedValue {
  std::string name;     // "forward", ..., "step"; "weights", ..., "total"
  double predicted = 0;
  double measured = 0;
  bool has_measured = true;
  double step_s = 0;    // phases: the measured traced step they are shares of; 0 otherwise
  // predicted / measured - 1 (+0.10: the prediction is 10% above the measurement); none when
  // nothing was measured, the measurement is 0, or the phase is small (see kSmallPhaseShare).
  std::optional<double> error() const;
  // (predicted - measured) / step_s: the phase's part in the step's error; none without a step.
  std::optional<double> of_step() const;
  bool small() const;   // a phase under kSmallPhaseShare of the step on both sides
};

// "+12.3%", "-4.0%", or "-" for none; the CLI's tables and the app's Compare page print these.
std::string percent_text(std::optional<double> fraction);

// The legend every predicted-vs-measured table prints under its phases: the sign of an error,
// what "of step" is, and what each phase measures.
std::string comparison_legend();

// The processors a plan's ranks share when they outnumber them (cluster.shared_processors: a
// GPU's virtual ranks, a CPU's rank threads), else 0: what step_phases() takes to count each phase
// as processor time on both sides. A CPU run counts so only when its measured timeline has its
// threads' CPU times (Span::cpu_ns), which processor time then reads; without them (runs stored
// before they were measured) its phases compare per rank, since wall time alone cannot tell a
// thread that computed from one that waited for a core or blocked in a collective.
std::int64_t shared_processors_of(const estimator::Plan& plan, const estimator::Timeline* measured);

// Whether any span of `timeline` has its thread's CPU time (Span::cpu_ns >= 0).
bool has_cpu_times(const estimator::Timeline& timeline);

// The ranks each rank of the plan's predicted timeline stands for (one per pipeline stage drawn).
std::int64_t ranks_per_stage(const estimator::Plan& plan);

// The sentence under a comparison's phases when they are processor time (shared > 0), for the
// plan's GPUs or CPU cores.
std::string shared_phases_note(std::int64_t shared, const estimator::Plan& plan);

// forward, backward, communication, idle, optimizer ("other" when either side has some),
// then "step" = (predicted_step_s, measured_step_s). Phases are shares of measured.step_s.
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
  // Where the run and the plan describe different jobs (model, layout, batch, ranks), or the
  // two steps are so far apart that they likely do: each a sentence for a warning. Empty: they
  // agree on everything the run records.
  std::vector<std::string> mismatches;
};

// The mismatches of compare_run_with_plan(), on their own for tests: `run` as stored (a probe
// run's request in its plan JSON; an import's ranks in its summary), the plan and its estimate.
std::vector<std::string> run_plan_mismatches(const store::RunRecord& run, const estimator::Plan& plan,
                                             const estimator::Estimate& estimate, double predicted_step_s,
                                             double measured_step_s);

// Errors: the run does not exist or has neither an imported nor a measured timeline (a saved
// plan has only a prediction), or the plan does not estimate.
Result<PlanRunComparison> compare_run_with_plan(store::Store& db, std::int64_t run_id, const estimator::Plan& plan);

}  // namespace plansight::core
