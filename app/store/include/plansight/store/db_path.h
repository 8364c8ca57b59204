// Where the store lives. One SQLite file per user, found in this order: the --db argument,
// $PLANSIGHT_DB, $XDG_DATA_HOME/plansight/plansight.sqlite, ~/.local/share/plansight/plansight.sqlite.
// The environment is passed in as a lookup so that tests never touch the real one.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "plansight/estimator/diagnostic.h"
#include "plansight/store/status.h"

namespace plansight::store {

struct DbLocation {
  std::filesystem::path path;
  std::string origin;  // "--db", "PLANSIGHT_DB", "XDG_DATA_HOME" or "HOME": where the path came from
};

// Returns the variable's value, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// Empty values count as unset; a relative XDG_DATA_HOME is ignored, as the XDG Base Directory
// specification asks. Error when nothing applies (no HOME either).
Result<DbLocation> resolve_db_path(const std::string& db_arg, const EnvLookup& env);
Result<DbLocation> resolve_db_path(const std::string& db_arg = {});  // the process environment

// Creates the folders above `db_path` when missing; the error names the folder and the reason.
Status ensure_parent_folder(const std::filesystem::path& db_path);

}  // namespace plansight::store
