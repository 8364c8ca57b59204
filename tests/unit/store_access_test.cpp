// Reading a run database never changes it: a missing one is an error naming the path (no file,
// no folder), a read-only one still lists, and nothing in the file changes. Runs a killed writer
// left "running" are marked failed (interrupted) on the next open for writing; a live writer's
// are not.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "../support/store_test_util.h"
#include "plansight/store/store.h"

namespace plansight::store {
namespace {

using plansight::testing::TempDir;

std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(StoreAccess, ReadingAMissingDatabaseCreatesNothing) {
  TempDir dir;
  const auto path = dir / "typo/folder/runs.sqlite";
  auto store = Store::open(path, {.access = Access::read_only});
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error_text().find("no run database at " + path.string()), std::string::npos) << store.error_text();
  EXPECT_FALSE(std::filesystem::exists(dir / "typo")) << "no folder made for a read";
}

// Deleting a run from a mistyped path made an empty database there (`plansight runs delete 1
// --db typo.sqlite`): opening to modify needs the file as reading does, and opens it for writing.
TEST(StoreAccess, ModifyingAMissingDatabaseCreatesNothing) {
  TempDir dir;
  const auto path = dir / "typo/runs.sqlite";
  auto store = Store::open(path, {.access = Access::modify});
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error_text().find("no run database at " + path.string()), std::string::npos) << store.error_text();
  EXPECT_FALSE(std::filesystem::exists(dir / "typo")) << "no folder made to modify";
  const auto there = dir / "runs.sqlite";
  {
    auto made = Store::open(there);
    ASSERT_TRUE(made.ok()) << made.error_text();
    ASSERT_TRUE(made->create_run({RunKind::import, "kept", "cpu", RunStatus::complete, std::nullopt, ""}).ok());
  }
  auto existing = Store::open(there, {.access = Access::modify});
  ASSERT_TRUE(existing.ok()) << existing.error_text();
  EXPECT_FALSE(existing->read_only());
  const auto runs = existing->list_runs();
  ASSERT_TRUE(runs.ok()) << runs.error_text();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_TRUE(existing->delete_run(runs->front().id).ok());
}

TEST(StoreAccess, AReadOnlyDatabaseListsAndStaysUnchanged) {
  TempDir dir;
  const auto path = dir / "ro.sqlite";
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << store.error_text();
    ASSERT_TRUE(store->create_run({RunKind::import, "kept", "cpu", RunStatus::complete, std::nullopt, ""}).ok());
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  const std::string before = bytes_of(path);
  {
    auto store = Store::open(path, {.access = Access::read_only});
    ASSERT_TRUE(store.ok()) << store.error_text();
    EXPECT_TRUE(store->read_only());
    auto runs = store->list_runs();
    ASSERT_TRUE(runs.ok()) << runs.error_text();
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(runs->front().name, "kept");
    // Even as root (who may write the file anyway) a read-only store writes nothing.
    auto write = store->create_run({RunKind::import, "new", "cpu", RunStatus::complete, std::nullopt, ""});
    EXPECT_FALSE(write.ok());
  }
  EXPECT_EQ(bytes_of(path), before);
}

TEST(StoreAccess, RunsOfAKilledWriterAreMarkedInterrupted) {
  TempDir dir;
  const auto path = dir / "runs.sqlite";
  std::int64_t own = 0;
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << store.error_text();
    own = *store->create_run({RunKind::probe, "this process", "cpu", RunStatus::running, std::nullopt, ""});
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = Store::open(path);
    if (!store.ok()) _exit(2);
    if (!store->create_run({RunKind::probe, "killed", "cpu", RunStatus::running, std::nullopt, ""}).ok()) _exit(3);
    kill(getpid(), SIGKILL);  // as a probe whose CLI was killed
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer was killed";

  // Reading does not mark (it writes nothing).
  {
    auto reader = Store::open(path, {.access = Access::read_only});
    ASSERT_TRUE(reader.ok()) << reader.error_text();
    auto runs = reader->list_runs();
    ASSERT_TRUE(runs.ok());
    for (const auto& r : *runs) EXPECT_EQ(r.status, RunStatus::running) << r.name;
  }
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.error_text();
  ASSERT_EQ(store->warnings().size(), 1u);
  EXPECT_NE(store->warnings().front().message.find("was left running; interrupted: the process that ran it (pid " +
                                                   std::to_string(child)),
            std::string::npos)
      << store->warnings().front().message;
  auto runs = store->list_runs();
  ASSERT_TRUE(runs.ok());
  for (const auto& r : *runs) {
    if (r.name == "killed") {
      EXPECT_EQ(r.status, RunStatus::failed);
      EXPECT_NE(r.notes.find("interrupted"), std::string::npos) << r.notes;
      EXPECT_FALSE(r.finished_at.empty());
    } else {
      EXPECT_EQ(r.id, own);
      EXPECT_EQ(r.status, RunStatus::running) << "this process is alive: its run is not touched";
    }
  }
  // Finishing a run forgets its writer; a later open has nothing to mark.
  ASSERT_TRUE(store->update_status(own, RunStatus::complete).ok());
  auto again = Store::open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->warnings().empty());
}

}  // namespace
}  // namespace plansight::store
