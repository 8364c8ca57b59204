// Shared by the commands that work on stored runs: opening the store from --db, and loading a
// run with its best timeline (imported, else measured, else predicted).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "plansight/cli/args.h"
#include "plansight/cli/commands.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/store/store.h"

namespace plansight::cli {

// --db (or the default database); commands that only read pass Access::read_only.
Result<store::Store> open_store(const Args& args, store::Access access = store::Access::read_write);

struct LoadedRun {
  store::RunRecord run;
  estimator::Timeline timeline;
};
// The run and its best timeline: imported, else measured, else predicted.
Result<LoadedRun> load_best_timeline(store::Store& store, std::int64_t run_id);
// positionals[index] is the run id.
Result<LoadedRun> load_run_timeline(store::Store& store, const std::vector<std::string>& positionals, std::size_t index);

struct LoadedRunTimelines {
  store::RunRecord run;
  std::vector<estimator::Timeline> timelines;  // every source the run has
};
Result<LoadedRunTimelines> load_all_run_timelines(store::Store& store, const std::vector<std::string>& positionals);

// The hardware profile a probe run was measured with (linked by its summary's
// hardware_profile_id), else the newest profile of the run's device.
Result<estimator::HardwareProfile> hardware_profile_of_run(store::Store& db, const store::RunRecord& run);

// Prints each error on stderr; returns Status::invalid_input.
Status report_cli_errors(const std::vector<Diagnostic>& errors, std::ostream& err);

}  // namespace plansight::cli
