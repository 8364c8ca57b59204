// The probe's records in the run store (see probe_run_store.h).
#include "plansight/cli/probe_run_store.h"

#include "plansight/estimator/timeline_json.h"

namespace plansight::cli {

namespace est = plansight::estimator;

std::string probe_run_name(const nlohmann::json& request) {
  const auto layout = request.value("layout", nlohmann::json::object());
  const auto model = request.value("model", nlohmann::json());
  const std::string name = model.is_object() ? model.value("name", std::string("model"))
                                             : model.is_string() ? model.get<std::string>() : "model";
  return "probe " + name + " tp" + std::to_string(layout.value("tp", 1)) + " pp" + std::to_string(layout.value("pp", 1)) +
         " dp" + std::to_string(layout.value("dp", 1)) + " " + layout.value("schedule", std::string("1f1b"));
}

store::NewRun started_probe_run(const nlohmann::json& started_event, const std::string& name) {
  const nlohmann::json request = started_event.value("request", nlohmann::json::object());
  return store::NewRun{store::RunKind::probe, name.empty() ? probe_run_name(request) : name,
                       started_event.value("device", std::string("cpu")), store::RunStatus::running, request, ""};
}

Result<std::int64_t> store_probe_result(store::Store& db, std::int64_t run_id, const nlohmann::json& result,
                                        const nlohmann::json& request, const std::string& device) {
  auto tx = db.transaction();
  if (!tx) return tx.errors();
  store::RunSummary summary = summary_of(result, request);
  if (result.contains("timeline") && result["timeline"].is_object()) {
    auto timeline = est::timeline_from_json(result["timeline"]);
    if (!timeline) return timeline.errors();
    timeline->source = est::TimelineSource::measured;
    if (!timeline->tracks.empty()) {
      auto info = db.append_timeline(run_id, *timeline);
      if (!info) return info.errors();
    }
  }
  if (result.contains("profile") && result["profile"].is_object()) {
    auto profile_id = db.save_hardware_profile(device, result["profile"]);
    if (!profile_id) return profile_id.errors();
    summary.metrics["hardware_profile_id"] = static_cast<double>(*profile_id);
  }
  if (auto s = db.update_summary(run_id, summary); !s) return s.errors();
  const bool stopped = result.value("stopped_early", false);
  if (auto s = db.update_status(run_id, stopped ? store::RunStatus::cancelled : store::RunStatus::complete); !s) {
    return s.errors();
  }
  if (auto s = tx->commit(); !s) return s.errors();
  return run_id;
}

std::string describe_child_exit(const ChildExit& exit) {
  return exit.term_signal ? "plansight-probe was killed by signal " + std::to_string(exit.term_signal)
                          : "plansight-probe exited with status " + std::to_string(exit.exit_code) + " without a result";
}

std::vector<Diagnostic> probe_failure(const ProbeEvents& events, const std::string& how_it_ended,
                                      const std::string& stderr_text) {
  if (!events.errors.empty()) return events.errors;
  std::string why = how_it_ended;
  if (!stderr_text.empty()) why += ": " + stderr_text.substr(0, 2000);  // the start says what went wrong
  return {make_error("probe", why)};
}

store::Status mark_probe_run_unfinished(store::Store& db, std::int64_t run_id, const std::vector<Diagnostic>& errors,
                                        bool cancelled) {
  auto tx = db.transaction();
  if (!tx) return tx.errors();
  if (auto s = db.set_notes(run_id, join_messages(errors)); !s) return s;
  if (auto s = db.update_status(run_id, cancelled ? store::RunStatus::cancelled : store::RunStatus::failed); !s) return s;
  return tx->commit();
}

}  // namespace plansight::cli
