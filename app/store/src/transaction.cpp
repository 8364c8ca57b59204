// BEGIN IMMEDIATE / SAVEPOINT guards. Savepoints share one name: SQLite releases or rolls back to
// the innermost savepoint of that name, which is the innermost guard while guards live in scopes.
#include "plansight/store/transaction.h"

#include "sqlite_statement.h"

namespace plansight::store {
namespace {
constexpr const char* kSavepoint = "plansight_write";
}

Result<Transaction> Transaction::begin(sqlite3* db, const std::filesystem::path& path) {
  const bool outermost = sqlite3_get_autocommit(db) != 0;
  const std::string sql = outermost ? std::string("BEGIN IMMEDIATE") : std::string("SAVEPOINT ") + kSavepoint;
  if (auto st = detail::exec(db, path, sql, "starting a write transaction"); !st) return st.errors();
  return Transaction(db, path, outermost);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), outermost_(other.outermost_) {
  other.db_ = nullptr;
}

Transaction::~Transaction() { rollback(); }

Status Transaction::commit() {
  if (!db_) return make_error("store", path_.string() + ": commit of a transaction that is no longer open");
  const std::string sql = outermost_ ? std::string("COMMIT") : std::string("RELEASE ") + kSavepoint;
  if (auto st = detail::exec(db_, path_, sql, "committing"); !st) return st;  // destructor rolls back
  db_ = nullptr;
  return Done{};
}

void Transaction::rollback() noexcept {
  if (!db_) return;
  sqlite3* db = db_;
  db_ = nullptr;
  if (outermost_) {
    // After some errors (SQLITE_FULL, IOERR, NOMEM) SQLite has already rolled back.
    if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  } else {
    const std::string sql = std::string("ROLLBACK TO ") + kSavepoint + "; RELEASE " + kSavepoint;
    sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  }
}

}  // namespace plansight::store
