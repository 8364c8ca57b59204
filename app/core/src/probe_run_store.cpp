// The probe's records in the run store (see probe_run_store.h).
#include "plansight/core/probe_run_store.h"

#include "plansight/estimator/hardware_profile.h"

namespace plansight::core {

namespace est = plansight::estimator;

std::string probe_run_name(const nlohmann::json& request) {
  const auto layout = request.value("layout", nlohmann::json::object());
  const auto model = request.value("model", nlohmann::json());
  const std::string name = model.is_object() ? model.value("name", std::string("model"))
                                             : model.is_string() ? model.get<std::string>() : "model";
  return "probe " + name + " tp" + std::to_string(layout.value("tp", 1)) + " pp" + std::to_string(layout.value("pp", 1)) +
         " dp" + std::to_string(layout.value("dp", 1)) + " " + layout.value("schedule", std::string("1f1b"));
}

store::NewRun started_probe_run(const probe::StartedEvent& started, const std::string& name) {
  const nlohmann::json request = probe::to_json(started.request);
  return store::NewRun{store::RunKind::probe, name.empty() ? probe_run_name(request) : name, started.device,
                       store::RunStatus::running, request, ""};
}

Result<std::int64_t> store_probe_result(store::Store& db, std::int64_t run_id, const probe::ProbeResult& result,
                                        const probe::ProbeRequest& request, const std::string& device) {
  auto tx = db.transaction();
  if (!tx) return tx.errors();
  store::RunSummary summary = summary_of(result, request);
  if (!result.timeline.tracks.empty()) {
    auto info = db.append_timeline(run_id, result.timeline);  // source measured (protocol/result.h)
    if (!info) return info.errors();
  }
  if (result.profile) {
    auto profile_id = db.save_hardware_profile(device, est::to_json(*result.profile));
    if (!profile_id) return profile_id.errors();
    summary.metrics["hardware_profile_id"] = static_cast<double>(*profile_id);
  }
  if (auto s = db.update_summary(run_id, summary); !s) return s.errors();
  const bool stopped = result.stopped_early;
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
  if (events.error && !events.error->errors.empty()) return events.error->errors;
  if (!events.protocol_errors.empty()) return events.protocol_errors;
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

}  // namespace plansight::core
