// Opening the store: where the file goes, what is refused (not a database, another program's,
// a newer schema, bad paths) and that refusing writes nothing; migrations from an older version
// and a failing migration leaving the previous version intact.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "../support/store_test_util.h"
#include "plansight/store/db_path.h"
#include "plansight/store/store.h"

namespace plansight::store {
namespace {

using plansight::testing::TempDir;

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// Raw SQL on a file, for what the store itself refuses to do.
void raw_exec(const std::filesystem::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

TEST(StorePath, ResolutionOrderIsArgumentEnvXdgHome) {
  const auto all =
      env_of({{"PLANSIGHT_DB", "/env/p.sqlite"}, {"XDG_DATA_HOME", "/xdg"}, {"HOME", "/home/u"}});
  EXPECT_EQ(resolve_db_path("/arg.sqlite", all)->path, "/arg.sqlite");
  EXPECT_EQ(resolve_db_path("/arg.sqlite", all)->origin, "--db");
  EXPECT_EQ(resolve_db_path("", all)->path, "/env/p.sqlite");
  EXPECT_EQ(resolve_db_path("", env_of({{"XDG_DATA_HOME", "/xdg"}, {"HOME", "/home/u"}}))->path,
            "/xdg/plansight/plansight.sqlite");
  EXPECT_EQ(resolve_db_path("", env_of({{"HOME", "/home/u"}}))->path,
            "/home/u/.local/share/plansight/plansight.sqlite");
  // Empty counts as unset; a relative XDG_DATA_HOME is ignored (XDG Base Directory spec).
  EXPECT_EQ(
      resolve_db_path("", env_of({{"PLANSIGHT_DB", ""}, {"XDG_DATA_HOME", "rel"}, {"HOME", "/h"}}))->origin,
      "HOME");
  auto none = resolve_db_path("", env_of({}));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error_text().find("HOME"), std::string::npos);
}

TEST(StoreOpen, CreatesFoldersWalAndLatestSchema) {
  TempDir dir;
  const auto path = dir / "a/b/c/plansight.sqlite";
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.error_text();
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(store->schema_version(), latest_schema_version());
  EXPECT_TRUE(store->warnings().empty());
  EXPECT_EQ(*store->integrity_check(), "ok");
  // WAL is persistent in the file: a raw connection sees it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(StoreOpen, ReopeningKeepsData) {
  TempDir dir;
  std::int64_t id = 0;
  {
    auto store = Store::open(dir / "s.sqlite");
    ASSERT_TRUE(store.ok());
    id = *store->create_run({RunKind::plan, "kept", "", RunStatus::complete, std::nullopt, ""});
  }
  auto store = Store::open(dir / "s.sqlite");
  ASSERT_TRUE(store.ok()) << store.error_text();
  EXPECT_EQ(store->get_run(id)->name, "kept");
}

TEST(StoreOpen, TextFileIsRefusedByName) {
  TempDir dir;
  const auto path = dir / "notes.txt";
  std::ofstream(path)
      << "these are my notes, not a database, and they are long enough to fill a header......\n";
  const auto before = file_bytes(path);
  auto store = Store::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error_text().find(path.string()), std::string::npos) << store.error_text();
  EXPECT_NE(store.error_text().find("not a Plansight run database"), std::string::npos) << store.error_text();
  EXPECT_EQ(file_bytes(path), before);
}

TEST(StoreOpen, AnotherProgramsDatabaseIsRefusedUntouched) {
  TempDir dir;
  const auto path = dir / "other.sqlite";
  raw_exec(path, "CREATE TABLE photos (id INTEGER PRIMARY KEY, caption TEXT)");
  const auto before = file_bytes(path);
  auto store = Store::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error_text().find("not a Plansight run database"), std::string::npos) << store.error_text();
  EXPECT_EQ(file_bytes(path), before);

  const auto tagged = dir / "tagged.sqlite";
  raw_exec(tagged, "PRAGMA application_id = 42; CREATE TABLE t (x)");
  auto store2 = Store::open(tagged);
  ASSERT_FALSE(store2.ok());
  EXPECT_NE(store2.error_text().find("another program"), std::string::npos) << store2.error_text();
}

TEST(StoreOpen, NewerSchemaIsRefusedWithoutWriting) {
  TempDir dir;
  const auto path = dir / "future.sqlite";
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(
        store->create_run({RunKind::probe, "from the future", "H100", RunStatus::complete, {}, ""}).ok());
  }
  raw_exec(path, "PRAGMA user_version = " + std::to_string(latest_schema_version() + 98));
  const auto before = file_bytes(path);
  auto store = Store::open(path);
  ASSERT_FALSE(store.ok());
  const std::string text = store.error_text();
  EXPECT_NE(text.find("schema version " + std::to_string(latest_schema_version() + 98)), std::string::npos)
      << text;
  EXPECT_NE(text.find("newer than this program's " + std::to_string(latest_schema_version())),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(path.string()), std::string::npos) << text;
  EXPECT_EQ(file_bytes(path), before);
}

TEST(StoreOpen, BadPathsAreErrorsNamingThePath) {
  TempDir dir;
  EXPECT_FALSE(Store::open("").ok());

  auto folder = Store::open(dir.path());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.error_text().find("is a folder"), std::string::npos) << folder.error_text();

  std::ofstream(dir / "plainfile") << "x";
  const auto under_file = dir / "plainfile/sub/plansight.sqlite";
  auto blocked = Store::open(under_file);
  ASSERT_FALSE(blocked.ok());
  EXPECT_NE(blocked.error_text().find((dir / "plainfile/sub").string()), std::string::npos)
      << blocked.error_text();

  if (geteuid() != 0) {  // root ignores permissions
    std::filesystem::create_directory(dir / "locked");
    std::filesystem::permissions(dir / "locked",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    auto denied = Store::open(dir / "locked/plansight.sqlite");
    ASSERT_FALSE(denied.ok());
    EXPECT_NE(denied.error_text().find("locked"), std::string::npos) << denied.error_text();
    std::filesystem::permissions(dir / "locked", std::filesystem::perms::owner_all);
  }
}

TEST(StoreOpen, ReadOnlyFileIsRefused) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores file permissions";
  TempDir dir;
  const auto path = dir / "ro.sqlite";
  ASSERT_TRUE(Store::open(path).ok());
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  auto store = Store::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error_text().find("read-only"), std::string::npos) << store.error_text();
}

TEST(StoreOpen, DefaultLocationFollowsPlansightDb) {
  TempDir dir;
  const auto path = dir / "from-env/plansight.sqlite";
  const char* saved = std::getenv("PLANSIGHT_DB");
  const std::string saved_value = saved ? saved : "";
  setenv("PLANSIGHT_DB", path.c_str(), 1);
  auto store = Store::open_default();
  if (saved)
    setenv("PLANSIGHT_DB", saved_value.c_str(), 1);
  else
    unsetenv("PLANSIGHT_DB");
  ASSERT_TRUE(store.ok()) << store.error_text();
  EXPECT_EQ(store->path(), path);
  EXPECT_TRUE(std::filesystem::exists(path));
}

// Migrations, exercised with the real version 1 plus test-only later versions.
const Migration kAddColour{2, "test: runs.colour",
                           "ALTER TABLE runs ADD COLUMN colour TEXT NOT NULL DEFAULT 'blue'"};
const Migration kBroken{2, "test: broken", "CREATE TABLE half_done (x INTEGER); SELECT no_such_function();"};
const Migration kHalfDone{2, "test: half_done", "CREATE TABLE half_done (x INTEGER)"};

TEST(StoreMigrations, OldFileIsMigratedKeepingItsRuns) {
  TempDir dir;
  const auto path = dir / "old.sqlite";
  const std::vector<Migration> v1(schema_migrations().begin(), schema_migrations().begin() + 1);
  const std::vector<Migration> v2 = {v1[0], kAddColour};
  std::int64_t id = 0;
  {
    auto store = Store::open(path, {.migrations = v1});
    ASSERT_TRUE(store.ok()) << store.error_text();
    EXPECT_EQ(store->schema_version(), 1);
    id = *store->create_run(
        {RunKind::probe, "made at v1", "cpu", RunStatus::running, nlohmann::json{{"tp", 2}}, ""});
  }
  {
    auto store = Store::open(path, {.migrations = v2});
    ASSERT_TRUE(store.ok()) << store.error_text();
    EXPECT_EQ(store->schema_version(), 2);
    auto run = store->get_run(id);
    ASSERT_TRUE(run.ok()) << run.error_text();
    EXPECT_EQ(run->name, "made at v1");
    EXPECT_EQ((*run->plan)["tp"], 2);
    EXPECT_EQ(*store->integrity_check(), "ok");
  }
  // The migrated file is now newer than a program that knows only version 1.
  auto old_program = Store::open(path, {.migrations = v1});
  ASSERT_FALSE(old_program.ok());
  EXPECT_NE(old_program.error_text().find("schema version 2, newer than this program's 1"), std::string::npos)
      << old_program.error_text();
}

TEST(StoreMigrations, FailingMigrationRollsBackToThePreviousVersion) {
  TempDir dir;
  const auto path = dir / "m.sqlite";
  const Migration v1 = schema_migrations()[0];
  const std::vector<Migration> broken = {v1, kBroken};
  auto store = Store::open(path, {.migrations = broken});
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error_text().find("migrating to schema version 2 (test: broken)"), std::string::npos)
      << store.error_text();
  // Version 1 was committed; version 2's first statement was rolled back: half_done can be created.
  const std::vector<Migration> fixed = {v1, kHalfDone};
  auto again = Store::open(path, {.migrations = fixed});
  ASSERT_TRUE(again.ok()) << again.error_text();
  EXPECT_EQ(again->schema_version(), 2);
}

TEST(StoreMigrations, BadMigrationListIsAnError) {
  TempDir dir;
  const std::vector<Migration> gap = {schema_migrations()[0], {3, "skips 2", "SELECT 1"}};
  auto store = Store::open(dir / "g.sqlite", {.migrations = gap});
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error_text().find("numbered"), std::string::npos) << store.error_text();
}

}  // namespace
}  // namespace plansight::store
