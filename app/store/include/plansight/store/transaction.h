// Transaction: an RAII guard that rolls back unless commit() succeeded. The outermost guard on a
// connection is BEGIN IMMEDIATE (takes the write lock up front, so a read-then-write transaction
// cannot fail half-way with SQLITE_BUSY); guards opened inside it are SAVEPOINTs, so store calls
// compose: a caller can wrap create_run + append_timeline + update_status in one transaction.
#pragma once

#include <filesystem>
#include <utility>

#include "plansight/estimator/diagnostic.h"
#include "plansight/store/status.h"

struct sqlite3;

namespace plansight::store {

class Transaction {
 public:
  // Starts a transaction on `db`; `path` only names the file in error messages.
  static Result<Transaction> begin(sqlite3* db, const std::filesystem::path& path);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();  // rolls back when not committed

  Status commit();
  bool nested() const { return !outermost_; }

 private:
  Transaction(sqlite3* db, std::filesystem::path path, bool outermost)
      : db_(db), path_(std::move(path)), outermost_(outermost) {}
  void rollback() noexcept;

  sqlite3* db_ = nullptr;  // null once committed, rolled back or moved from
  std::filesystem::path path_;
  bool outermost_ = true;
};

}  // namespace plansight::store
