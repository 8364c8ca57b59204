// The CLI's commands on stored runs (reading them, or deleting one) never create a database: a
// mistyped --db is an error naming the path, with no file or folder left behind; a read-only
// database still lists; an empty trace is refused and stores nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/cli_run.h"

namespace plansight::cli {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;

struct Dir {
  fs::path path = fs::path(::testing::TempDir()) / ("store_cli_" + std::to_string(::getpid()));
  Dir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
};

TEST(StoreCli, CommandsOnStoredRunsNeverCreateADatabase) {
  Dir dir;
  const std::string db = (dir.path / "typo" / "runs.sqlite").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"runs"}, {"runs", "show", "1"}, {"compare", "1"}, {"export", "1", "--out", "x.json"},
        {"analyze", "1"}, {"diff", "1", "2"}, {"runs", "delete", "1"}}) {
    std::vector<std::string> with_db = args;
    with_db.insert(with_db.end(), {"--db", db});
    auto r = run_cli(with_db);
    EXPECT_NE(r.status, Status::ok) << args.front();
    EXPECT_NE(r.err.find("no run database at " + db), std::string::npos) << args.front() << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir.path / "typo")) << args.front() << " made a folder";
  }
}

TEST(StoreCli, AReadOnlyDatabaseStillLists) {
  Dir dir;
  const std::string db = (dir.path / "runs.sqlite").string();
  const std::string trace = std::string(PLANSIGHT_TEST_DATA_DIR) + "/traces/kineto_legacy_2021.json";
  ASSERT_EQ(run_cli({"import", trace, "--db", db}).status, Status::ok);
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  auto r = run_cli({"runs", "--db", db});
  fs::permissions(dir.path, fs::perms::owner_all);
  ASSERT_EQ(r.status, Status::ok) << r.err;
  EXPECT_NE(r.out.find("kineto_legacy_2021"), std::string::npos) << r.out;
}

TEST(StoreCli, AnEmptyTraceIsRefusedAndStoresNothing) {
  Dir dir;
  const std::string db = (dir.path / "runs.sqlite").string();
  for (const char* text : {"{}", R"({"traceEvents": []})"}) {
    const fs::path trace = dir.path / "empty.json";
    std::ofstream(trace) << text;
    auto r = run_cli({"import", trace.string(), "--db", db});
    EXPECT_EQ(r.status, Status::invalid_input) << text;
    EXPECT_NE(r.err.find("the trace holds no events"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(db)) << "nothing stored, not even an empty database";
  }
}

}  // namespace
}  // namespace plansight::cli
