// Stored runs with their timelines and profile (see run_lookup.h).
#include "plansight/core/run_lookup.h"

#include <string>

namespace plansight::core {

Result<estimator::HardwareProfile> hardware_profile_of_run(store::Store& db, const store::RunRecord& run) {
  Result<store::HardwareProfileRecord> record = make_error("profile", "");
  if (run.summary && run.summary->metrics.count("hardware_profile_id")) {
    record = db.load_hardware_profile(static_cast<std::int64_t>(run.summary->metrics.at("hardware_profile_id")));
  }
  if (!record) record = db.latest_hardware_profile(run.device);
  if (!record) {
    return make_error("profile", "no hardware profile for run " + std::to_string(run.id) + " (device \"" + run.device +
                                     "\"); run plansight probe --calibrate on this machine first");
  }
  return estimator::hardware_profile_from_json(record->profile);
}

Result<LoadedRun> load_best_timeline(store::Store& store, std::int64_t run_id) {
  auto run = store.get_run(run_id);
  if (!run) return run.errors();
  for (auto source : {estimator::TimelineSource::imported, estimator::TimelineSource::measured, estimator::TimelineSource::predicted}) {
    auto timeline = store.load_timeline(run_id, source);
    if (timeline) return LoadedRun{std::move(*run), std::move(*timeline)};
  }
  return make_error("run " + std::to_string(run_id), "has no timeline");
}

Result<LoadedRunTimelines> load_all_timelines(store::Store& store, std::int64_t run_id) {
  auto run = store.get_run(run_id);
  if (!run) return run.errors();
  LoadedRunTimelines out{std::move(*run), {}};
  for (auto source : {estimator::TimelineSource::predicted, estimator::TimelineSource::measured, estimator::TimelineSource::imported}) {
    if (auto timeline = store.load_timeline(run_id, source)) out.timelines.push_back(std::move(*timeline));
  }
  if (out.timelines.empty()) return make_error("run " + std::to_string(run_id), "has no timeline");
  return out;
}

}  // namespace plansight::core
