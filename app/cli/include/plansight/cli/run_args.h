// The run commands' arguments: the store from --db, run ids from positionals, errors on stderr.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "plansight/cli/args.h"
#include "plansight/cli/commands.h"
#include "plansight/core/run_lookup.h"
#include "plansight/store/store.h"

namespace plansight::cli {

// --db (or the default database); commands that only read pass Access::read_only.
Result<store::Store> open_store(const Args& args, store::Access access = store::Access::read_write);

// positionals[index] as a run id; the error names "run id" and says what is valid.
Result<std::int64_t> run_id_at(const std::vector<std::string>& positionals, std::size_t index);

// The run at positionals[index] and its best timeline (core::load_best_timeline).
Result<core::LoadedRun> load_run_timeline(store::Store& store, const std::vector<std::string>& positionals, std::size_t index);
// The run at positionals[0] with every timeline it has.
Result<core::LoadedRunTimelines> load_all_run_timelines(store::Store& store, const std::vector<std::string>& positionals);

// Prints each error on stderr; returns Status::invalid_input.
Status report_cli_errors(const std::vector<Diagnostic>& errors, std::ostream& err);

}  // namespace plansight::cli
