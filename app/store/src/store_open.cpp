// Store::open: folders, connection, identity checks (before any write), then the connection
// settings and migrations. Also the small Store plumbing: move, close, transaction(), checks.
#include <system_error>

#include "migrate.h"
#include "run_writers.h"
#include "plansight/store/db_path.h"
#include "plansight/store/store.h"
#include "sqlite_statement.h"

namespace plansight::store {
namespace {

using detail::exec;
using detail::Statement;

Result<std::string> pragma_text(sqlite3* db, const std::filesystem::path& path, std::string_view sql) {
  auto stmt = Statement::prepare(db, path, sql);
  if (!stmt) return stmt.errors();
  auto row = stmt->step(sql);
  if (!row) return row.errors();
  return *row ? stmt->text(0) : std::string();
}

// Opening to read or to modify needs the file: the error names the path and what creates one.
Result<Store> missing_database(const std::filesystem::path& path) {
  return make_error("db", "no run database at " + path.string() +
                              "; valid: an existing run database (probe and import create one when they store a run)");
}

}  // namespace

void Store::CloseDb::operator()(sqlite3* db) const {
  sqlite3_close_v2(db);  // the last connection to close checkpoints the WAL and removes it
}

Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Result<Store> Store::open(const std::filesystem::path& path, const OpenOptions& options) {
  if (path.empty()) return make_error("db", "the run database path is empty");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error("db", path.string() +
                                " is a folder; the run database must be a file path "
                                "such as " +
                                (path / "plansight.sqlite").string());
  }
  if (options.access == Access::read_only) return open_for_reading(path, options);
  const bool create = options.access == Access::read_write;
  if (!create && !std::filesystem::is_regular_file(path, ec)) return missing_database(path);
  if (create) {
    if (auto st = ensure_parent_folder(path); !st) return st.errors();
  }

  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), nullptr);
  std::unique_ptr<sqlite3, CloseDb> db(raw);
  if (rc != SQLITE_OK) {
    return make_error("db", "cannot open the run database " + path.string() + ": " +
                                (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
  // A second writer (a probe run while the GUI saves a plan) waits this long for the lock
  // instead of failing at once; readers in WAL mode never wait for writers.
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);

  auto version = detail::check_store_file(raw, path, options.migrations);  // reads only
  if (!version) return version.errors();

  if (sqlite3_db_readonly(raw, "main") == 1) {
    return make_error("db", path.string() +
                                " is read-only (check its permissions and its folder's); "
                                "the run database must be writable");
  }

  Store store(std::move(db), path);
  // WAL: readers see the last committed state while a writer appends, which is how the GUI
  // shows runs while a probe writes one. Switching is a write, hence after the checks above.
  auto mode = pragma_text(raw, path, "PRAGMA journal_mode = WAL");
  if (!mode) return mode.errors();
  if (*mode != "wal") {
    store.warnings_.push_back(make_warning(
        "db", path.string() + ": WAL mode unavailable (journal mode is '" + *mode +
                  "'; network filesystems often lack the shared memory it needs), so readers will wait "
                  "for writers"));
  }
  // synchronous=NORMAL in WAL mode: a commit is not fsynced, only the WAL at checkpoints. Every
  // committed transaction survives the process crashing or being killed (the data is in the
  // OS page cache); an OS crash or power cut can lose the last few commits but never corrupts
  // the file (https://www.sqlite.org/pragma.html#pragma_synchronous). Runs are re-creatable,
  // a fsync per span batch is not worth it.
  if (auto st = exec(raw, path, "PRAGMA synchronous = NORMAL", "setting synchronous"); !st)
    return st.errors();
  // Per connection, off by default in SQLite; timelines and metrics cascade with their run.
  if (auto st = exec(raw, path, "PRAGMA foreign_keys = ON", "enabling foreign keys"); !st) return st.errors();

  auto reached = detail::migrate(raw, path, options.migrations);
  if (!reached) return reached.errors();
  store.schema_version_ = *reached;
  // run_writers exists from schema 2 on (tests may migrate with lists of their own: ask the file).
  auto writers = pragma_text(raw, path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'run_writers'");
  if (!writers) return writers.errors();
  store.track_writers_ = *writers == "1";
  if (store.track_writers_) {
    auto marked = detail::mark_interrupted_runs(raw, path);
    if (!marked) return marked.errors();
    for (const auto& note : *marked) store.warnings_.push_back(make_warning("db", note));
  }
  return store;
}

Result<Store> Store::open_for_reading(const std::filesystem::path& path, const OpenOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return missing_database(path);
  // mode=ro first; a WAL file in a folder this user cannot write has no -shm to share, which
  // SQLite can only read with immutable=1 (https://www.sqlite.org/wal.html#readonly): then no
  // process can be writing it, so reading it as immutable is safe.
  std::string last_error;
  for (const char* mode : {"mode=ro", "immutable=1"}) {
    const std::string uri = "file:" + path.string() + "?" + mode;
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    std::unique_ptr<sqlite3, CloseDb> db(raw);
    if (rc != SQLITE_OK) {
      last_error = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
      continue;
    }
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, options.busy_timeout_ms);
    auto version = detail::check_store_file(raw, path, options.migrations);  // reads only
    if (!version) {
      last_error = version.error_text();
      continue;
    }
    if (*version < static_cast<int>(options.migrations.size())) {
      return make_error("db", path.string() + " was written by an older Plansight (schema " + std::to_string(*version) +
                                  "); open it once with a command that stores runs (probe, import) to upgrade it");
    }
    Store store(std::move(db), path);
    store.read_only_ = true;
    store.schema_version_ = *version;
    return store;
  }
  return make_error("db", "cannot open the run database " + path.string() + " for reading: " + last_error);
}

Result<Store> Store::open_default(const std::string& db_arg, Access access) {
  auto location = resolve_db_path(db_arg);
  if (!location) return location.errors();
  OpenOptions options;
  options.access = access;
  return open(location->path, options);
}

Result<Transaction> Store::transaction() { return Transaction::begin(db_.get(), path_); }

Result<std::string> Store::integrity_check() {
  auto stmt = Statement::prepare(db_.get(), path_, "PRAGMA integrity_check");
  if (!stmt) return stmt.errors();
  std::string report;
  for (;;) {
    auto row = stmt->step("checking integrity");
    if (!row) return row.errors();
    if (!*row) break;
    if (!report.empty()) report += '\n';
    report += stmt->text(0);
  }
  return report;
}

}  // namespace plansight::store
