// Who writes a running run (schema version 2's run_writers): recorded when a run is created or
// set running, forgotten when it leaves "running", and checked when the store opens for writing:
// a run whose writer was a process of this host that no longer exists is marked failed, with a
// note that says it was interrupted. A writer on another host cannot be checked from here, and
// stays running until a process of its own host opens the store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/store/status.h"

struct sqlite3;

namespace plansight::store::detail {

Status record_writer(sqlite3* db, const std::filesystem::path& path, std::int64_t run_id);
Status forget_writer(sqlite3* db, const std::filesystem::path& path, std::int64_t run_id);
// Marks the runs of dead writers of this host failed (interrupted); one note per run marked.
Result<std::vector<std::string>> mark_interrupted_runs(sqlite3* db, const std::filesystem::path& path);
// This machine's host name, as the writer rows record it.
std::string this_host();

}  // namespace plansight::store::detail
