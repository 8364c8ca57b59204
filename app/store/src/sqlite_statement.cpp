// Prepared statements and SQLite error messages for the store.
#include "sqlite_statement.h"

namespace plansight::store::detail {

Diagnostic sqlite_error(sqlite3* db, const std::filesystem::path& path, std::string_view doing) {
  const int code = db ? sqlite3_extended_errcode(db) : SQLITE_ERROR;
  std::string message = path.string() + ": " + std::string(doing) + ": ";
  message += db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  message += " (SQLite code " + std::to_string(code) + ")";
  return make_error("store", std::move(message));
}

Result<Statement> Statement::prepare(sqlite3* db, const std::filesystem::path& path, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sqlite_error(db, path, "preparing \"" + std::string(sql.substr(0, 60)) + "\"");
  }
  return Statement(stmt, db, path);
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (bind_rc_ == SQLITE_OK) bind_rc_ = sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (bind_rc_ == SQLITE_OK) bind_rc_ = sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  if (bind_rc_ == SQLITE_OK) {
    bind_rc_ = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  }
  return *this;
}

Statement& Statement::bind_blob(int index, std::span<const std::uint8_t> bytes) {
  if (bind_rc_ == SQLITE_OK) {
    // A zero-length blob is still a blob, not NULL: pass a non-null pointer.
    static const std::uint8_t empty = 0;
    bind_rc_ = sqlite3_bind_blob64(stmt_, index, bytes.empty() ? &empty : bytes.data(), bytes.size(),
                                   SQLITE_TRANSIENT);
  }
  return *this;
}

Statement& Statement::bind_optional(int index, const std::optional<std::string>& text) {
  if (text) return bind(index, std::string_view(*text));
  if (bind_rc_ == SQLITE_OK) bind_rc_ = sqlite3_bind_null(stmt_, index);
  return *this;
}

Result<bool> Statement::step(std::string_view doing) {
  if (bind_rc_ != SQLITE_OK) {
    return make_error("store", path_.string() + ": " + std::string(doing) +
                                   ": binding a value failed: " + sqlite3_errstr(bind_rc_));
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_error(db_, path_, doing);
}

Status Statement::run(std::string_view doing) {
  for (;;) {
    auto row = step(doing);
    if (!row) return row.errors();
    if (!*row) return Done{};
  }
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  const int n = sqlite3_column_bytes(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}

std::span<const std::uint8_t> Statement::blob(int column) const {
  const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_, column));
  const int n = sqlite3_column_bytes(stmt_, column);
  return p ? std::span<const std::uint8_t>(p, static_cast<std::size_t>(n)) : std::span<const std::uint8_t>();
}

Status exec(sqlite3* db, const std::filesystem::path& path, std::string_view sql, std::string_view doing) {
  const std::string text(sql);  // sqlite3_exec needs a NUL-terminated string
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return sqlite_error(db, path, doing);
  }
  return Done{};
}

}  // namespace plansight::store::detail
