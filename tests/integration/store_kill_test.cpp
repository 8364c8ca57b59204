// Crash safety: a child process writes runs in a loop (run + timeline + summary + status in one
// transaction) and reports each committed id through a pipe; the parent SIGKILLs it at a random
// moment, reopens the file and checks integrity and that every reported run is there, complete.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <set>

#include "../support/store_test_util.h"
#include "plansight/store/store.h"

namespace plansight::store {
namespace {

using plansight::testing::random_timeline;
using plansight::testing::same_timeline;
using plansight::testing::TempDir;

constexpr std::size_t kSpans = 2000;

estimator::Timeline timeline_for(std::int64_t run_id) {
  return random_timeline(static_cast<std::uint64_t>(run_id), kSpans);
}

// The child: never returns. Exit code 3 means a store call failed (its text on stderr).
[[noreturn]] void write_runs_until_killed(const std::filesystem::path& path, int fd) {
  auto fail = [](const std::string& text) {
    std::fprintf(stderr, "child: %s\n", text.c_str());
    _exit(3);
  };
  auto store = Store::open(path);
  if (!store.ok()) fail(store.error_text());
  for (int i = 0; i < 100'000; ++i) {
    auto tx = store->transaction();
    if (!tx.ok()) fail(tx.error_text());
    auto id =
        store->create_run({RunKind::probe, "killed " + std::to_string(i), "cpu", RunStatus::running, {}, ""});
    if (!id.ok()) fail(id.error_text());
    if (auto t = store->append_timeline(*id, timeline_for(*id)); !t.ok()) fail(t.error_text());
    RunSummary summary;
    summary.step_time_s = static_cast<double>(*id) * 1e-3;
    if (auto st = store->update_summary(*id, summary); !st.ok()) fail(st.error_text());
    if (auto st = store->update_status(*id, RunStatus::complete); !st.ok()) fail(st.error_text());
    usleep(300);  // widen the window so that the kill usually lands inside an open transaction
    if (auto st = tx->commit(); !st.ok()) fail(st.error_text());
    const std::int64_t committed = *id;
    if (write(fd, &committed, sizeof committed) != static_cast<ssize_t>(sizeof committed)) _exit(4);
  }
  _exit(0);
}

// Reads one id, waiting at most 10 s; nullopt at end of file.
std::optional<std::int64_t> read_id(int fd, bool& timed_out) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 10'000) <= 0) {
    timed_out = true;
    return std::nullopt;
  }
  std::int64_t id = 0;
  std::size_t got = 0;
  while (got < sizeof id) {
    const ssize_t n = read(fd, reinterpret_cast<char*>(&id) + got, sizeof id - got);
    if (n == 0) return std::nullopt;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  return id;
}

TEST(StoreKill, CommittedRunsSurviveSigkillAndTheFileStaysIntact) {
  TempDir dir;
  const auto path = dir / "killed.sqlite";
  std::set<std::int64_t> reported;
  std::mt19937 rng(2024);
  for (int round = 0; round < 6; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      write_runs_until_killed(path, fds[1]);
    }
    close(fds[1]);
    // Kill after a few commits, at a random point within the next transaction or two.
    const int commits_before_kill = 3 + round * 2;
    bool timed_out = false;
    for (int i = 0; i < commits_before_kill; ++i) {
      auto id = read_id(fds[0], timed_out);
      if (!id) break;
      reported.insert(*id);
    }
    usleep(static_cast<useconds_t>(rng() % 4000));
    kill(child, SIGKILL);
    while (auto id = read_id(fds[0], timed_out)) reported.insert(*id);  // sent before the kill
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_FALSE(timed_out) << "round " << round << ": the child stopped reporting";
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "round " << round << ": child ended on its own, exit code " << WEXITSTATUS(status);

    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << "round " << round << ": " << store.error_text();
    auto integrity = store->integrity_check();
    ASSERT_TRUE(integrity.ok()) << integrity.error_text();
    ASSERT_EQ(*integrity, "ok") << "round " << round;
    for (auto id : reported) {
      auto run = store->get_run(id);
      ASSERT_TRUE(run.ok()) << "round " << round << ": reported run " << id << " lost: " << run.error_text();
      EXPECT_EQ(run->status, RunStatus::complete);
      ASSERT_TRUE(run->summary && run->summary->step_time_s);
      EXPECT_EQ(*run->summary->step_time_s, static_cast<double>(id) * 1e-3);
    }
    // Every run in the file, reported or committed just before the kill, is whole.
    auto runs = store->list_runs();
    ASSERT_TRUE(runs.ok()) << runs.error_text();
    EXPECT_GE(runs->size(), reported.size());
    EXPECT_LE(runs->size(), reported.size() + static_cast<std::size_t>(round) + 1);
    for (const auto& run : *runs) {
      ASSERT_EQ(run.status, RunStatus::complete) << "run " << run.id << " half-written";
      auto t = store->load_timeline(run.id, timeline_for(run.id).source);
      ASSERT_TRUE(t.ok()) << t.error_text();
      ASSERT_TRUE(same_timeline(timeline_for(run.id), *t)) << "run " << run.id;
    }
    std::printf("round %d: %zu runs reported, %zu in the file\n", round, reported.size(), runs->size());
  }
}

}  // namespace
}  // namespace plansight::store
