// Loading stored runs with their timelines and hardware profile: what the CLI's run commands
// and the app's Runs and Compare pages both read.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/timeline.h"
#include "plansight/store/store.h"

namespace plansight::core {

struct LoadedRun {
  store::RunRecord run;
  estimator::Timeline timeline;
};
// The run and its best timeline: imported, else measured, else predicted.
Result<LoadedRun> load_best_timeline(store::Store& store, std::int64_t run_id);

struct LoadedRunTimelines {
  store::RunRecord run;
  std::vector<estimator::Timeline> timelines;  // every source the run has: predicted, measured, imported
};
Result<LoadedRunTimelines> load_all_timelines(store::Store& store, std::int64_t run_id);

// The hardware profile a probe run was measured with (linked by its summary's
// hardware_profile_id), else the newest profile of the run's device.
Result<estimator::HardwareProfile> hardware_profile_of_run(store::Store& db, const store::RunRecord& run);

}  // namespace plansight::core
