// Checking what a file is before touching it, and bringing its schema up to date. Internal to
// plansight::store; Store::open() calls check_store_file() (reads only) and then migrate().
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <span>

#include "plansight/estimator/diagnostic.h"
#include "plansight/store/schema.h"
#include "plansight/store/status.h"

namespace plansight::store::detail {

// Refuses, without writing anything, a file that is not SQLite, another program's database, or
// a Plansight store newer than `migrations` knows. Returns the file's schema version.
Result<int> check_store_file(sqlite3* db, const std::filesystem::path& path,
                             std::span<const Migration> migrations);

// Applies each migration above the file's version in its own BEGIN IMMEDIATE transaction
// (re-reading the version inside it, so two processes opening a new file at once do not both
// migrate). Returns the version reached.
Result<int> migrate(sqlite3* db, const std::filesystem::path& path, std::span<const Migration> migrations);

}  // namespace plansight::store::detail
