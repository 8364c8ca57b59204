// How an imported trace is kept in the run store, shared by `plansight import` and the desktop
// app's Runs page: one run of kind "import" (status complete, named after the file or folder),
// its imported timeline, a summary (spans, ranks, window_s) and, as the run's plan JSON, where
// the trace came from with per-rank facts and the collective calls (communicator size, dtype and
// process group, which a Timeline does not hold; `analyze` reads them back). One transaction:
// an import is stored whole or not at all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/interop/imported_trace.h"
#include "plansight/store/store.h"

namespace plansight::core {

struct StoredImport {
  std::int64_t run_id = 0;
  std::string name;
  std::string device;       // the first rank's device, "" when the trace does not say
  nlohmann::json ranks;     // per rank: rank, world_size, source, device, events, spans
  std::size_t spans = 0;
  double window_s = 0;      // end - begin of the whole timeline
};

// The run name for a trace path: its last component ("trace_dir/" names "trace_dir").
std::string import_run_name(const std::filesystem::path& path);

// Stores `trace`, read from `path`, as a new run; `name` empty means import_run_name(path).
Result<StoredImport> store_imported_trace(store::Store& db, const interop::ImportedTrace& trace,
                                          const std::filesystem::path& path, const std::string& name = {});

// The collective calls as the run's plan JSON keeps them: [rank, kind, start_ns, duration_ns,
// bytes, group_size, name, process_group, dtype] per call; and back (malformed entries skipped).
nlohmann::json collectives_to_json(const std::vector<estimator::CollectiveCall>& calls);
std::vector<estimator::CollectiveCall> collectives_from_json(const nlohmann::json& list);

// The collective calls an imported run's plan JSON keeps ({"trace": {"collectives": [...]}});
// empty for any other run. A probe run's plan is its request, where "trace" is a boolean.
std::vector<estimator::CollectiveCall> stored_collectives(const store::RunRecord& run);

}  // namespace plansight::core
