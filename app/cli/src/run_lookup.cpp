// Store access shared by the run commands.
#include "plansight/cli/run_lookup.h"

#include <cstdlib>

namespace plansight::cli {
namespace {

Result<std::int64_t> parse_run_id(const std::vector<std::string>& positionals, std::size_t index) {
  if (positionals.size() <= index) return make_error("run id", "missing; give a run id (see plansight runs)");
  const std::string& text = positionals[index];
  char* end = nullptr;
  const long long id = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || id <= 0) return make_error("run id", "\"" + text + "\" is not a run id; valid: a positive whole number (see plansight runs)");
  return static_cast<std::int64_t>(id);
}

}  // namespace

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

Status report_cli_errors(const std::vector<Diagnostic>& errors, std::ostream& err) {
  for (const auto& e : errors) err << e.to_string() << "\n";
  return Status::invalid_input;
}

Result<store::Store> open_store(const Args& args, store::Access access) {
  return store::Store::open_default(args.value("--db").value_or(""), access);
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

Result<LoadedRun> load_run_timeline(store::Store& store, const std::vector<std::string>& positionals, std::size_t index) {
  auto id = parse_run_id(positionals, index);
  if (!id) return id.errors();
  return load_best_timeline(store, *id);
}

Result<LoadedRunTimelines> load_all_run_timelines(store::Store& store, const std::vector<std::string>& positionals) {
  auto id = parse_run_id(positionals, 0);
  if (!id) return id.errors();
  auto run = store.get_run(*id);
  if (!run) return run.errors();
  LoadedRunTimelines out{std::move(*run), {}};
  for (auto source : {estimator::TimelineSource::predicted, estimator::TimelineSource::measured, estimator::TimelineSource::imported}) {
    if (auto timeline = store.load_timeline(*id, source)) out.timelines.push_back(std::move(*timeline));
  }
  if (out.timelines.empty()) return make_error("run " + std::to_string(*id), "has no timeline");
  return out;
}

}  // namespace plansight::cli
