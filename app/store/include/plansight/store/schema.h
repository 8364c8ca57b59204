// The schema as an ordered list of migrations; PRAGMA user_version holds the number of the last
// one applied. Each migration runs in its own transaction, so a failure leaves the previous
// version intact. A file whose version is above the last migration this program knows is refused.
#pragma once

#include <span>
#include <string_view>

namespace plansight::store {

struct Migration {
  int version = 0;               // 1, 2, ...: consecutive
  std::string_view description;  // one line, shown in errors
  std::string_view sql;          // one or more statements
};

// PRAGMA application_id marks a file as a Plansight store ("PlSt"), so that another program's
// SQLite file is refused instead of being migrated into.
inline constexpr int store_application_id = 0x506c5374;

std::span<const Migration> schema_migrations();  // this program's schema
int latest_schema_version();

}  // namespace plansight::store
