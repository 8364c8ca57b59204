// Resolution of the store's file name and creation of its folder. Pure over the EnvLookup, so the
// order (--db, PLANSIGHT_DB, XDG_DATA_HOME, HOME) is tested without touching the environment.
#include "plansight/store/db_path.h"

#include <cstdlib>
#include <system_error>

namespace plansight::store {
namespace {

std::optional<std::string> non_empty(const EnvLookup& env, const char* name) {
  auto value = env(name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

const std::filesystem::path kStoreTail = std::filesystem::path("plansight") / "plansight.sqlite";

}  // namespace

Result<DbLocation> resolve_db_path(const std::string& db_arg, const EnvLookup& env) {
  if (!db_arg.empty()) return DbLocation{db_arg, "--db"};
  if (auto db = non_empty(env, "PLANSIGHT_DB")) return DbLocation{*db, "PLANSIGHT_DB"};
  // XDG Base Directory specification: "If an implementation encounters a relative path in any
  // of these variables it should consider the path invalid and ignore it."
  if (auto xdg = non_empty(env, "XDG_DATA_HOME"); xdg && std::filesystem::path(*xdg).is_absolute()) {
    return DbLocation{std::filesystem::path(*xdg) / kStoreTail, "XDG_DATA_HOME"};
  }
  if (auto home = non_empty(env, "HOME")) {
    return DbLocation{std::filesystem::path(*home) / ".local" / "share" / kStoreTail, "HOME"};
  }
  return make_error("db",
                    "cannot place the run database: no --db argument and none of "
                    "PLANSIGHT_DB, XDG_DATA_HOME (absolute) or HOME is set");
}

Result<DbLocation> resolve_db_path(const std::string& db_arg) {
  return resolve_db_path(db_arg, [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once at startup
    if (!value) return std::nullopt;
    return std::string(value);
  });
}

Status ensure_parent_folder(const std::filesystem::path& db_path) {
  const auto folder = db_path.parent_path();
  if (folder.empty()) return Done{};  // a bare file name: the current folder
  std::error_code ec;
  if (std::filesystem::is_directory(folder, ec)) return Done{};
  std::filesystem::create_directories(folder, ec);
  if (ec) {
    return make_error("db", "cannot create the folder " + folder.string() + " for the run database " +
                                db_path.string() + ": " + ec.message());
  }
  return Done{};
}

}  // namespace plansight::store
