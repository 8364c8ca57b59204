// What the Compare page shows for one stored probe run, computed off the GUI thread the way
// `plansight compare RUN` does it: the plan of the run's configuration (cli::plan_of_probe_run)
// predicted with the run's HardwareProfile, phases from cli::step_phases() on both timelines,
// memory per category (largest stage predicted, largest rank measured), both timelines indexed.
#pragma once

#include <QString>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "plansight/gui/timeline_index.h"
#include "plansight/store/store.h"

namespace plansight::gui {

struct ComparisonRow {
  QString name;
  double predicted = 0;
  double measured = 0;
  bool has_measured = true;
  // predicted / measured - 1 (+0.10: the estimator said 10% more); none without a measurement.
  std::optional<double> error() const;
};

struct ProbeComparison {
  std::int64_t run_id = 0;
  QString title;                     // "run 3: probe small on cpu: …"
  std::vector<ComparisonRow> phases; // forward … optimizer (other if any), then "step"
  std::vector<ComparisonRow> memory; // bytes: weights … reserve, then "total"
  // Both shifted to start at 0 and padded to one extent, so that they share one time axis.
  std::shared_ptr<const TimelineIndex> predicted, measured;  // measured null if none stored
  QString note;   // how to read the phases (waiting is bubble)
  QString error;  // non-empty: nothing else is set
};

// A probe run is comparable when it finished with a plan and a step time.
bool is_comparable_probe_run(const store::RunRecord& run);

ProbeComparison compare_probe_run(store::Store& db, std::int64_t run_id);

}  // namespace plansight::gui
