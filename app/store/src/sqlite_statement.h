// Statement: a prepared SQLite statement that finalizes itself, with typed bind/column helpers,
// and sqlite_error(), which turns the connection's last error into a Diagnostic naming the file
// and what the store was doing. Internal to plansight::store.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "plansight/estimator/diagnostic.h"
#include "plansight/store/status.h"

namespace plansight::store::detail {

// "<path>: <doing>: <sqlite message> (<extended code name>)".
Diagnostic sqlite_error(sqlite3* db, const std::filesystem::path& path, std::string_view doing);

class Statement {
 public:
  static Result<Statement> prepare(sqlite3* db, const std::filesystem::path& path, std::string_view sql);

  Statement(Statement&& other) noexcept : stmt_(other.stmt_), db_(other.db_), path_(std::move(other.path_)) {
    other.stmt_ = nullptr;
  }
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  // Bind by 1-based index; a failed bind shows up as an error from step().
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind_blob(int index, std::span<const std::uint8_t> bytes);
  Statement& bind_optional(int index, const std::optional<std::string>& text);
  // 1-based index of a named parameter (":kind"); 0 when the SQL has no such parameter.
  int index_of(const char* name) const { return sqlite3_bind_parameter_index(stmt_, name); }

  // true: a row is ready; false: done. `doing` names the operation in the error.
  Result<bool> step(std::string_view doing);
  // Runs to completion (for INSERT/UPDATE/DELETE).
  Status run(std::string_view doing);
  // Ready to run again with new bindings.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    bind_rc_ = SQLITE_OK;
  }

  std::int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string text(int column) const;
  std::span<const std::uint8_t> blob(int column) const;  // valid until the next step()

 private:
  Statement(sqlite3_stmt* stmt, sqlite3* db, std::filesystem::path path)
      : stmt_(stmt), db_(db), path_(std::move(path)) {}
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  int bind_rc_ = SQLITE_OK;
};

// Runs SQL without results (one or more statements).
Status exec(sqlite3* db, const std::filesystem::path& path, std::string_view sql, std::string_view doing);

}  // namespace plansight::store::detail
