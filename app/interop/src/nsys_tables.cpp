// SQLite access for the nsys importer. Files open read-only; memory images are deserialised
// into a private in-memory database (SQLITE_DESERIALIZE_READONLY) so fuzzed bytes cannot write.
#include "nsys_tables.h"

#include <cstring>

#include <sqlite3.h>

#include "plansight/interop/trace_error.h"

namespace plansight::interop::detail {
namespace {

std::string quote_identifier(std::string_view name) {
  std::string q = "\"";
  for (char c : name) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

}  // namespace

SqliteDb SqliteDb::open_file(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw TraceError(0, "cannot open " + path + " as SQLite: " + msg);
  }
  return SqliteDb(db);
}

SqliteDb SqliteDb::open_memory(std::string_view bytes) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    throw TraceError(0, "cannot create an in-memory SQLite database");
  }
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size() ? bytes.size() : 1));
  if (!copy) {
    sqlite3_close(db);
    throw TraceError(0, "out of memory copying the SQLite image");
  }
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  const int rc = sqlite3_deserialize(db, "main", copy, static_cast<sqlite3_int64>(bytes.size()),
                                     static_cast<sqlite3_int64>(bytes.size()),
                                     SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) {
    sqlite3_close(db);
    throw TraceError(0, std::string("not a SQLite database image: ") + sqlite3_errstr(rc));
  }
  return SqliteDb(db);
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close(db_);
}

bool SqliteDb::has_table(std::string_view table) const {
  SqliteQuery q(*this, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = " +
                           std::string("'") + std::string(table) + "'");
  return q.step();
}

std::set<std::string> SqliteDb::columns(std::string_view table) const {
  std::set<std::string> out;
  if (!has_table(table)) return out;
  SqliteQuery q(*this, "PRAGMA table_info(" + quote_identifier(table) + ")");
  while (q.step()) out.emplace(q.text(1));
  return out;
}

SqliteQuery::SqliteQuery(const SqliteDb& db, const std::string& sql) : db_(db.handle()) {
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    const std::string msg = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt_);
    throw TraceError(0, "SQLite: " + msg + " (in: " + sql.substr(0, 120) + ")");
  }
}

SqliteQuery::~SqliteQuery() { sqlite3_finalize(stmt_); }

bool SqliteQuery::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw TraceError(0, std::string("SQLite: ") + sqlite3_errmsg(db_));
}

bool SqliteQuery::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::int64_t SqliteQuery::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string_view SqliteQuery::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (!p) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
}

}  // namespace plansight::interop::detail
