// Internal: a small RAII layer over the SQLite C API for reading nsys exports: open read-only
// (from a file or from memory), ask which tables and columns exist, and step through a query
// row by row so a large export never sits in memory as a whole.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace plansight::interop::detail {

class SqliteDb {
 public:
  static SqliteDb open_file(const std::string& path);           // throws TraceError
  static SqliteDb open_memory(std::string_view bytes);          // throws TraceError
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&&) = delete;
  ~SqliteDb();

  bool has_table(std::string_view table) const;
  std::set<std::string> columns(std::string_view table) const;  // empty when the table is absent
  sqlite3* handle() const { return db_; }

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

class SqliteQuery {
 public:
  SqliteQuery(const SqliteDb& db, const std::string& sql);  // throws TraceError with SQLite's message
  SqliteQuery(const SqliteQuery&) = delete;
  SqliteQuery& operator=(const SqliteQuery&) = delete;
  ~SqliteQuery();

  bool step();  // next row; false at the end; throws on error (e.g. a corrupt page)
  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  std::string_view text(int column) const;  // empty for NULL

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace plansight::interop::detail
