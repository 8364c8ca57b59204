// How a probe run is kept in the run store, shared by `plansight probe` and the desktop app's
// Probe page so that both write exactly the same records: the run row appears when the probe
// reports "started" (status running, the normalised request as its plan, so a reader sees it
// while it runs and a crash still leaves it listed), the result's measured timeline, hardware
// profile and summary follow in one transaction, and a run that ended without a result keeps
// the reason in its notes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/core/child_process.h"
#include "plansight/core/probe_events.h"
#include "plansight/store/store.h"

namespace plansight::core {

// "probe tiny tp1 pp1 dp1 1f1b": the default name of a run of this (normalised) request.
std::string probe_run_name(const nlohmann::json& request);

// The row of a run whose probe just reported "started": kind probe, status running, the device
// and request of that event; `name` empty means probe_run_name().
store::NewRun started_probe_run(const probe::StartedEvent& started, const std::string& name = {});

// The result's timeline (source measured), profile (linked through the summary's
// hardware_profile_id metric: the store has no run->profile link) and summary, then the status:
// cancelled when the probe stopped early, else complete. One transaction: all or nothing.
Result<std::int64_t> store_probe_result(store::Store& db, std::int64_t run_id, const probe::ProbeResult& result,
                                        const probe::ProbeRequest& request, const std::string& device);

// How a child that gave no result ended: "plansight-probe exited with status 3 without a result".
std::string describe_child_exit(const ChildExit& exit);

// Why a run produced no result: the probe's own error event, else what it wrote that this app
// could not read, else `how_it_ended` with the start of its stderr.
std::vector<Diagnostic> probe_failure(const ProbeEvents& events, const std::string& how_it_ended,
                                      const std::string& stderr_text);

// A run that produced no result: its notes say why, its status is cancelled (stopped by the
// user before any step finished) or failed.
store::Status mark_probe_run_unfinished(store::Store& db, std::int64_t run_id, const std::vector<Diagnostic>& errors,
                                        bool cancelled);

}  // namespace plansight::core
