// The GUI reads while a probe run is written: two connections to one file. WAL lets the reader
// see the last committed state at once (no lock wait) and never a half-written run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "../support/store_test_util.h"
#include "plansight/store/store.h"

namespace plansight::store {
namespace {

using estimator::TimelineSource;
using plansight::testing::random_timeline;
using plansight::testing::same_timeline;
using plansight::testing::TempDir;

TEST(StoreConcurrency, ReaderSeesCommittedStateWhileAWriteIsOpen) {
  TempDir dir;
  auto writer = Store::open(dir / "c.sqlite");
  ASSERT_TRUE(writer.ok()) << writer.error_text();
  // busy_timeout 0: had the reader to wait for the writer's lock, its calls would fail at once.
  auto reader = Store::open(dir / "c.sqlite", {.busy_timeout_ms = 0});
  ASSERT_TRUE(reader.ok()) << reader.error_text();

  const auto first = writer->create_run({RunKind::plan, "committed", "", RunStatus::complete, {}, ""});
  ASSERT_TRUE(first.ok());
  auto tx = writer->transaction();
  ASSERT_TRUE(tx.ok());
  const auto second =
      writer->create_run({RunKind::probe, "being written", "cpu", RunStatus::running, {}, ""});
  ASSERT_TRUE(second.ok());
  const auto timeline = random_timeline(5, 20'000);
  ASSERT_TRUE(writer->append_timeline(*second, timeline).ok());

  auto during = reader->list_runs();
  ASSERT_TRUE(during.ok()) << during.error_text();
  ASSERT_EQ(during->size(), 1U);
  EXPECT_EQ(during->front().id, *first);
  EXPECT_FALSE(reader->load_timeline(*second, timeline.source).ok());
  // A second writer cannot start while the first holds the lock (and with no wait, says so).
  EXPECT_FALSE(reader->create_run({RunKind::plan, "blocked", "", RunStatus::complete, {}, ""}).ok());

  ASSERT_TRUE(tx->commit().ok());
  auto after = reader->list_runs();
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 2U);
  EXPECT_EQ(after->front().id, *second);
  auto loaded = reader->load_timeline(*second, timeline.source);
  ASSERT_TRUE(loaded.ok()) << loaded.error_text();
  EXPECT_TRUE(same_timeline(timeline, *loaded));
}

TEST(StoreConcurrency, ReaderThreadNeverSeesAHalfWrittenRun) {
  TempDir dir;
  const auto path = dir / "t.sqlite";
  ASSERT_TRUE(Store::open(path).ok());
  constexpr int kRuns = 60;
  std::atomic<bool> done{false};
  std::string writer_error;

  std::thread writer_thread([&] {
    auto store = Store::open(path);
    if (!store.ok()) {
      writer_error = store.error_text();
      done = true;
      return;
    }
    for (int i = 0; i < kRuns && writer_error.empty(); ++i) {
      auto tx = store->transaction();
      auto id =
          store->create_run({RunKind::probe, "run " + std::to_string(i), "cpu", RunStatus::running, {}, ""});
      if (!tx.ok() || !id.ok()) {
        writer_error = "run " + std::to_string(i) + ": " + (tx.ok() ? id.error_text() : tx.error_text());
        break;
      }
      RunSummary summary;
      summary.step_time_s = 0.001 * i;
      if (!store->append_timeline(*id, random_timeline(static_cast<std::uint64_t>(i), 3000)).ok() ||
          !store->update_summary(*id, summary).ok() || !store->update_status(*id, RunStatus::complete).ok() ||
          !tx->commit().ok()) {
        writer_error = "run " + std::to_string(i) + " failed";
      }
    }
    done = true;
  });

  // A failed assertion returns early: the writer finishes its runs and is joined, not abandoned.
  struct JoinOnExit {
    std::thread& thread;
    ~JoinOnExit() {
      if (thread.joinable()) thread.join();
    }
  } join_on_exit{writer_thread};

  auto reader = Store::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error_text();
  std::size_t last_count = 0;
  int reads = 0;
  double slowest_ms = 0;
  while (true) {
    const bool finished = done.load();
    const auto t0 = std::chrono::steady_clock::now();
    auto runs = reader->list_runs({.kind = RunKind::probe});
    ASSERT_TRUE(runs.ok()) << runs.error_text();
    ASSERT_GE(runs->size(), last_count);
    last_count = runs->size();
    for (const auto& run : *runs) {
      ASSERT_EQ(run.status, RunStatus::complete) << run.name << " visible before its transaction ended";
      ASSERT_TRUE(run.summary.has_value());
    }
    if (!runs->empty()) {
      const auto& newest = runs->front();
      const auto i = std::stoull(newest.name.substr(4));
      auto t = reader->load_timeline(newest.id, random_timeline(i, 0).source);
      ASSERT_TRUE(t.ok()) << t.error_text();
      ASSERT_TRUE(same_timeline(random_timeline(i, 3000), *t));
    }
    slowest_ms = std::max(
        slowest_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    ++reads;
    if (finished) break;
  }
  writer_thread.join();
  ASSERT_TRUE(writer_error.empty()) << writer_error;
  EXPECT_EQ(last_count, static_cast<std::size_t>(kRuns));
  std::printf("%d reads while %d runs were written; slowest read %.1f ms\n", reads, kRuns, slowest_ms);
}

}  // namespace
}  // namespace plansight::store
