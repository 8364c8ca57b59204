// Identity checks (application_id, user_version, existing tables) and ordered migrations.
#include "migrate.h"

#include <cstdio>
#include <string>

#include "plansight/store/transaction.h"
#include "sqlite_statement.h"

namespace plansight::store::detail {
namespace {

Result<std::int64_t> read_int(sqlite3* db, const std::filesystem::path& path, std::string_view sql,
                              std::string_view doing) {
  auto stmt = Statement::prepare(db, path, sql);
  if (!stmt) return stmt.errors();
  auto row = stmt->step(doing);
  if (!row) return row.errors();
  return *row ? stmt->int64(0) : 0;
}

std::string hex(std::int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(static_cast<std::uint32_t>(v)));
  return buf;
}

Status check_list(std::span<const Migration> migrations) {
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return make_error("store", "migration list is not numbered 1, 2, ...: entry " + std::to_string(i) +
                                     " has version " + std::to_string(migrations[i].version));
    }
  }
  if (migrations.empty()) return make_error("store", "no migrations given");
  return Done{};
}

}  // namespace

Result<int> check_store_file(sqlite3* db, const std::filesystem::path& path,
                             std::span<const Migration> migrations) {
  if (auto st = check_list(migrations); !st) return st.errors();
  // The first read of the file: a text file or a truncated database fails here.
  auto app_id = read_int(db, path, "PRAGMA application_id", "reading the file header");
  if (!app_id) {
    const int code = sqlite3_errcode(db);
    if (code == SQLITE_NOTADB) {
      return make_error("db", path.string() + " is not a Plansight run database (SQLite: " +
                                  sqlite3_errmsg(db) + "); pass another --db or move the file away");
    }
    if (code == SQLITE_CORRUPT) {
      return make_error("db", path.string() + " is damaged (SQLite: " + sqlite3_errmsg(db) +
                                  "); restore it from a backup or pass another --db");
    }
    return app_id.errors();
  }
  auto version = read_int(db, path, "PRAGMA user_version", "reading the schema version");
  if (!version) return version.errors();
  auto objects = read_int(db, path, "SELECT count(*) FROM sqlite_master", "listing tables");
  if (!objects) return objects.errors();

  if (*app_id != 0 && *app_id != store_application_id) {
    return make_error("db", path.string() + " is an SQLite database of another program (application_id " +
                                hex(*app_id) + ", Plansight's is " + hex(store_application_id) +
                                "); refusing to change it");
  }
  if (*app_id == 0 && (*version != 0 || *objects != 0)) {
    return make_error("db", path.string() + " is an SQLite database but not a Plansight run database (" +
                                std::to_string(*objects) + " schema objects, user_version " +
                                std::to_string(*version) + "); refusing to change it");
  }
  const int latest = migrations.back().version;
  if (*version > latest) {
    return make_error("db", path.string() + " has schema version " + std::to_string(*version) +
                                ", newer than this program's " + std::to_string(latest) +
                                ": a newer Plansight wrote it. Refusing to open it so that nothing is "
                                "lost; update Plansight or pass another --db");
  }
  return static_cast<int>(*version);
}

Result<int> migrate(sqlite3* db, const std::filesystem::path& path, std::span<const Migration> migrations) {
  if (auto st = check_list(migrations); !st) return st.errors();
  int reached = 0;
  for (const auto& m : migrations) {
    auto tx = Transaction::begin(db, path);
    if (!tx) return tx.errors();
    auto version = read_int(db, path, "PRAGMA user_version", "reading the schema version");
    if (!version) return version.errors();
    if (*version >= m.version) {  // already there (perhaps another process just migrated)
      reached = static_cast<int>(*version);
      continue;  // the guard rolls back the empty transaction
    }
    const std::string doing =
        "migrating to schema version " + std::to_string(m.version) + " (" + std::string(m.description) + ")";
    if (*version == 0) {
      if (auto st = exec(db, path, "PRAGMA application_id = " + std::to_string(store_application_id), doing);
          !st) {
        return st.errors();
      }
    }
    if (auto st = exec(db, path, m.sql, doing); !st) return st.errors();
    // user_version lives in the file header, which is written in the same transaction.
    if (auto st = exec(db, path, "PRAGMA user_version = " + std::to_string(m.version), doing); !st) {
      return st.errors();
    }
    if (auto st = tx->commit(); !st) return st.errors();
    reached = m.version;
  }
  return reached;
}

}  // namespace plansight::store::detail
