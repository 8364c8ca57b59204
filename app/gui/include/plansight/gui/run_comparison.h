// What the Compare page shows for one stored run, computed off the GUI thread the way the CLI
// computes it, in one of two ways:
// - a probe run against its own configuration (`plansight compare RUN`): the plan of the run
//   (core::plan_of_probe_run) predicted with the run's HardwareProfile;
// - any measured or imported run against a plan, normally the one being edited (`plansight
//   compare RUN --plan FILE`, core::compare_run_with_plan).
// Both give phases from core::step_phases() on both timelines, memory per category when the run
// measured it, and the two timelines shifted to 0 and padded to one extent (one time axis).
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "plansight/estimator/plan.h"
#include "plansight/gui/timeline_index.h"
#include "plansight/store/store.h"

namespace plansight::gui {

struct ComparisonRow {
  QString name;
  double predicted = 0;
  double measured = 0;
  bool has_measured = true;
  double step_s = 0;  // phases: the measured traced step they are shares of; 0 otherwise
  // As the CLI's ComparedValue (plan_run_comparison.h): predicted / measured - 1 (+0.10: the
  // estimator said 10% more), none without a measurement or for a phase under 5% of the step;
  // of_step() = (predicted - measured) / step_s, the phase's part in the step's error.
  std::optional<double> error() const;
  std::optional<double> of_step() const;
};

// A figure predicted beside measured, already formatted: tokens/s, MFU, a tensor-core share.
struct FigureRow {
  QString name;
  std::optional<double> predicted, measured;  // raw: tokens/s, or fractions (MFU, shares)
  QString predicted_text, measured_text;      // "-" where a side has none
  QString difference_text;                    // tokens/s: predicted / measured - 1; fractions: points
  std::optional<double> difference;           // raw, as the text says it
  QString tool_tip;
  bool bold = false;                          // the step, or a group's first row
};

struct RunComparison {
  std::int64_t run_id = 0;
  bool against_plan = false;         // false: the probe run's own configuration
  QString title;                     // "run 3: probe small on cpu: …"
  std::vector<ComparisonRow> phases; // forward … optimizer (other if any), then "step"
  std::vector<ComparisonRow> memory; // bytes: weights … reserve, then "total"; empty if not measured
  // Per operator of the layer and the head (`plansight compare RUN --operators`,
  // core::compare_operators): "qkv forward", ... as processor time over the step; empty when the
  // run's spans are not named after the probe's operators (a GPU run's name CUDA kernels).
  std::vector<ComparisonRow> operators;
  QString operators_note;
  std::shared_ptr<const TimelineIndex> predicted, measured;  // measured null if none stored
  // The predicted timeline laid out layer by layer (estimator/timeline_layers.h), on the same
  // axis; null when it could not be made (layers_message says why).
  std::shared_ptr<const TimelineIndex> predicted_layers;
  QString layers_message;
  // A probe run against its own configuration (empty against a plan, which the CLI gives no
  // throughput either): what ran it, tokens/s and MFU (core::run_throughput, as `plansight
  // compare RUN` prints them), and on a GPU the tensor-core share of kernel time per step, phase
  // and kernel class (core::tensor_core_shares on both timelines).
  QString device;                       // the GPU as CUDA names it, or the run's device ("cpu: ...")
  QString precision;                    // "bf16"
  std::vector<FigureRow> throughput;    // tokens/s, then MFU when there is one
  QString throughput_note;              // the peak MFU is taken against, or why there is no MFU
  std::vector<FigureRow> tensor_cores;  // empty on a CPU run
  QString tensor_core_note;             // short, under the table: the probe's own figure beside the rows'
  QString tensor_core_tip;              // how both sides count, and where the probe's figure came from
  QString note;   // how to read the phases (waiting is bubble; what "step" is; the legend)
  QStringList warnings;  // the run and the plan describe different jobs (compare_run_with_plan)
  QString error;  // non-empty: nothing else is set
};

// A probe run is comparable with its own configuration when it finished with a plan and a step time.
bool is_comparable_probe_run(const store::RunRecord& run);
// Any run with a measured or imported timeline can be set beside a plan.
bool has_measured_timeline(const std::vector<store::TimelineInfo>& timelines);

RunComparison compare_probe_run(store::Store& db, std::int64_t run_id);
// Plans whose schedule is longer than estimator::kMaxTimelineOps are refused (as the Timeline page
// refuses to draw them): the comparison needs the predicted timeline.
RunComparison compare_run_with_plan(store::Store& db, std::int64_t run_id, const estimator::Plan& plan);

}  // namespace plansight::gui
