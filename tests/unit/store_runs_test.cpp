// Runs, timelines and hardware profiles through the Store API: round trips, newest-first lists
// and filters, rename, status times, cascade delete, transactions that roll back, and a damaged
// timeline blob inside the database reported as an error naming the run.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <thread>

#include "../support/store_test_util.h"
#include "plansight/store/store.h"

namespace plansight::store {
namespace {

using estimator::TimelineSource;
using plansight::testing::random_timeline;
using plansight::testing::same_timeline;
using plansight::testing::TempDir;
using plansight::testing::trace_like_timeline;

class StoreRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::open(dir_ / "runs.sqlite");
    ASSERT_TRUE(opened.ok()) << opened.error_text();
    store_.emplace(std::move(*opened));
  }
  std::int64_t make(RunKind kind, const std::string& name, RunStatus status = RunStatus::running) {
    auto id = store_->create_run({kind, name, "NVIDIA H100 80GB HBM3", status, std::nullopt, ""});
    EXPECT_TRUE(id.ok()) << id.error_text();
    return id.ok() ? *id : -1;
  }
  std::int64_t rows(const std::string& sql) {  // a count over a raw connection
    sqlite3* db = nullptr;
    sqlite3_open((dir_ / "runs.sqlite").c_str(), &db);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    std::int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
  }
  TempDir dir_;
  std::optional<Store> store_;
};

TEST_F(StoreRuns, CreateAndGetRoundTripEveryField) {
  const nlohmann::json plan = {{"model", "llama-3.1-8b"}, {"layout", {{"tp", 4}, {"pp", 2}}}};
  auto id =
      store_->create_run({RunKind::probe, "tp4 pp2", "NVIDIA H100", RunStatus::running, plan, "first try"});
  ASSERT_TRUE(id.ok()) << id.error_text();
  auto run = store_->get_run(*id);
  ASSERT_TRUE(run.ok()) << run.error_text();
  EXPECT_EQ(run->id, *id);
  EXPECT_EQ(run->kind, RunKind::probe);
  EXPECT_EQ(run->name, "tp4 pp2");
  EXPECT_EQ(run->device, "NVIDIA H100");
  EXPECT_EQ(run->status, RunStatus::running);
  EXPECT_EQ(run->plan, plan);
  EXPECT_FALSE(run->summary.has_value());
  EXPECT_EQ(run->notes, "first try");
  EXPECT_TRUE(run->finished_at.empty());
  // "2025-03-01T12:00:00.123Z": UTC with milliseconds.
  ASSERT_EQ(run->created_at.size(), 24U) << run->created_at;
  EXPECT_EQ(run->created_at[10], 'T');
  EXPECT_EQ(run->created_at.back(), 'Z');
}

TEST_F(StoreRuns, SummaryRoundTripsIncludingNaNAndFillsMetrics) {
  const auto id = make(RunKind::probe, "s");
  RunSummary summary;
  summary.step_time_s = 0.4375;
  summary.loss_per_step = {10.5, 9.25, std::nan(""), 8.0};
  summary.memory_bytes = {{"weights", 16'000'000'000}, {"activations", 3'221'225'472}};
  summary.metrics = {{"mfu", 0.41}, {"tokens_per_s", 12345.5}, {"diverged_at", std::nan("")}};
  summary.device = {{"gpu", "NVIDIA H100 80GB HBM3"}, {"precision", "bf16"},
                    {"tensor_cores", {{"source", "kernel-name rules"}, {"step", {{"share", 0.72}}}}}};
  ASSERT_TRUE(store_->update_summary(id, summary).ok());
  auto run = store_->get_run(id);
  ASSERT_TRUE(run.ok()) << run.error_text();
  ASSERT_TRUE(run->summary.has_value());
  EXPECT_EQ(*run->summary, summary);
  // Finite metrics (and the step time) are rows in run_metrics; NaN stays in the JSON only.
  auto mfu = store_->metric_across_runs("mfu");
  ASSERT_TRUE(mfu.ok()) << mfu.error_text();
  ASSERT_EQ(mfu->size(), 1U);
  EXPECT_DOUBLE_EQ(mfu->front().value, 0.41);
  EXPECT_EQ(store_->metric_across_runs("step_time_s")->front().value, 0.4375);
  EXPECT_TRUE(store_->metric_across_runs("diverged_at")->empty());
  // A second summary replaces the metrics.
  summary.metrics = {{"mfu", 0.5}};
  ASSERT_TRUE(store_->update_summary(id, summary).ok());
  EXPECT_EQ(store_->metric_across_runs("mfu")->front().value, 0.5);
  EXPECT_TRUE(store_->metric_across_runs("tokens_per_s")->empty());
}

// The device report is kept whole; a summary without one (CPU runs, older rows) reads as empty,
// and a damaged one names the field.
TEST(RunSummaryJson, DeviceReportIsOptionalAndTyped) {
  auto plain = summary_from_json({{"step_time_s", 0.5}});
  ASSERT_TRUE(plain.ok()) << plain.error_text();
  EXPECT_TRUE(plain->device.empty());
  EXPECT_FALSE(to_json(*plain).contains("device"));
  auto bad = summary_from_json({{"device", "H100"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().front().field, "summary.device");
  RunSummary a, b;
  a.device = {{"precision", "bf16"}};
  EXPECT_FALSE(a == b);
  b.device = a.device;
  EXPECT_TRUE(a == b);
}

TEST_F(StoreRuns, ListIsNewestFirstAndFilters) {
  const auto a = make(RunKind::plan, "a", RunStatus::complete);
  const auto b = make(RunKind::probe, "b");
  const auto c = make(RunKind::import, "c", RunStatus::complete);
  const auto d = make(RunKind::probe, "d", RunStatus::failed);
  auto all = store_->list_runs();
  ASSERT_TRUE(all.ok()) << all.error_text();
  std::vector<std::int64_t> ids;
  for (const auto& r : *all) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{d, c, b, a}));

  auto probes = store_->list_runs({.kind = RunKind::probe});
  ASSERT_EQ(probes->size(), 2U);
  EXPECT_EQ((*probes)[0].id, d);
  EXPECT_EQ((*probes)[1].id, b);
  auto complete = store_->list_runs({.status = RunStatus::complete});
  ASSERT_EQ(complete->size(), 2U);
  EXPECT_EQ((*complete)[0].id, c);
  auto newest = store_->list_runs({.limit = 1});
  ASSERT_EQ(newest->size(), 1U);
  EXPECT_EQ(newest->front().id, d);
  EXPECT_TRUE(store_->list_runs({.kind = RunKind::probe, .status = RunStatus::cancelled})->empty());
}

TEST_F(StoreRuns, RenameNotesAndStatusTimes) {
  const auto id = make(RunKind::probe, "old name");
  ASSERT_TRUE(store_->rename_run(id, "new name").ok());
  ASSERT_TRUE(store_->set_notes(id, "bubble looks large").ok());
  EXPECT_EQ(store_->get_run(id)->name, "new name");
  EXPECT_EQ(store_->get_run(id)->notes, "bubble looks large");

  auto blank = store_->rename_run(id, "  \t");
  ASSERT_FALSE(blank.ok());
  EXPECT_NE(blank.error_text().find("blank"), std::string::npos);
  EXPECT_EQ(store_->get_run(id)->name, "new name");
  auto missing = store_->rename_run(id + 100, "x");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error_text().find("no run with id " + std::to_string(id + 100)), std::string::npos);

  ASSERT_TRUE(store_->update_status(id, RunStatus::cancelled).ok());
  auto run = store_->get_run(id);
  EXPECT_EQ(run->status, RunStatus::cancelled);
  EXPECT_EQ(run->finished_at.size(), 24U);
  EXPECT_GE(run->finished_at, run->created_at);
  EXPECT_FALSE(store_->update_status(id + 100, RunStatus::complete).ok());
}

TEST_F(StoreRuns, TimelinesRoundTripOnePerSource) {
  const auto id = make(RunKind::probe, "t");
  auto predicted = trace_like_timeline(1, 2, 500);
  predicted.source = TimelineSource::predicted;
  auto measured = random_timeline(2, 5000);
  measured.source = TimelineSource::measured;
  auto info = store_->append_timeline(id, predicted);
  ASSERT_TRUE(info.ok()) << info.error_text();
  EXPECT_EQ(info->rank_count, 2);
  EXPECT_EQ(info->track_count, 4);
  EXPECT_EQ(info->begin_ns, predicted.begin_ns());
  EXPECT_EQ(info->end_ns, predicted.end_ns());
  ASSERT_TRUE(store_->append_timeline(id, measured).ok());

  auto loaded = store_->load_timeline(id, TimelineSource::predicted);
  ASSERT_TRUE(loaded.ok()) << loaded.error_text();
  EXPECT_TRUE(same_timeline(predicted, *loaded));
  loaded = store_->load_timeline(id, TimelineSource::measured);
  ASSERT_TRUE(loaded.ok()) << loaded.error_text();
  EXPECT_TRUE(same_timeline(measured, *loaded));

  auto list = store_->list_timelines(id);
  ASSERT_TRUE(list.ok()) << list.error_text();
  ASSERT_EQ(list->size(), 2U);
  EXPECT_EQ((*list)[0].source, TimelineSource::measured);  // ordered by source name
  EXPECT_EQ((*list)[1].span_count, info->span_count);
  EXPECT_EQ((*list)[1].encoded_bytes, info->encoded_bytes);

  auto duplicate = store_->append_timeline(id, predicted);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.error_text().find("already has a predicted timeline"), std::string::npos);
  auto absent = store_->load_timeline(id, TimelineSource::imported);
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error_text().find("has no imported timeline"), std::string::npos);
  auto orphan = store_->append_timeline(id + 50, predicted);
  ASSERT_FALSE(orphan.ok());
  EXPECT_NE(orphan.error_text().find("no run with id"), std::string::npos);
}

TEST_F(StoreRuns, DeleteCascadesToTimelinesAndMetrics) {
  const auto keep = make(RunKind::probe, "keep");
  const auto gone = make(RunKind::probe, "gone");
  for (auto id : {keep, gone}) {
    ASSERT_TRUE(store_->append_timeline(id, random_timeline(static_cast<std::uint64_t>(id), 100)).ok());
    RunSummary s;
    s.metrics = {{"mfu", 0.3}};
    ASSERT_TRUE(store_->update_summary(id, s).ok());
  }
  ASSERT_TRUE(store_->delete_run(gone).ok());
  EXPECT_FALSE(store_->get_run(gone).ok());
  EXPECT_TRUE(store_->list_timelines(gone)->empty());
  EXPECT_EQ(rows("SELECT count(*) FROM timelines WHERE run_id = " + std::to_string(gone)), 0);
  EXPECT_EQ(rows("SELECT count(*) FROM run_metrics WHERE run_id = " + std::to_string(gone)), 0);
  EXPECT_EQ(store_->list_timelines(keep)->size(), 1U);
  EXPECT_EQ(store_->metric_across_runs("mfu")->size(), 1U);
  EXPECT_FALSE(store_->delete_run(gone).ok());
  // Ids are not reused after a delete (AUTOINCREMENT): a stale id cannot name a new run.
  EXPECT_GT(make(RunKind::plan, "next"), gone);
}

TEST_F(StoreRuns, TransactionGroupsCallsAndRollsBackUnlessCommitted) {
  std::int64_t id = 0;
  {
    auto tx = store_->transaction();
    ASSERT_TRUE(tx.ok()) << tx.error_text();
    id = make(RunKind::probe, "never committed");
    ASSERT_TRUE(store_->append_timeline(id, random_timeline(3, 50)).ok());
  }  // guard destroyed without commit
  EXPECT_FALSE(store_->get_run(id).ok());
  EXPECT_EQ(rows("SELECT count(*) FROM timelines"), 0);
  {
    auto tx = store_->transaction();
    ASSERT_TRUE(tx.ok());
    id = make(RunKind::probe, "committed");
    ASSERT_TRUE(store_->append_timeline(id, random_timeline(3, 50)).ok());
    // A failing call inside rolls back only its own savepoint.
    EXPECT_FALSE(store_->append_timeline(id, random_timeline(3, 50)).ok());
    ASSERT_TRUE(tx->commit().ok());
    EXPECT_FALSE(tx->commit().ok());  // a second commit is an error, not a crash
  }
  EXPECT_EQ(store_->get_run(id)->name, "committed");
  EXPECT_EQ(store_->list_timelines(id)->size(), 1U);
}

TEST_F(StoreRuns, DamagedTimelineBlobIsAnErrorNamingTheRun) {
  const auto id = make(RunKind::import, "damaged");
  ASSERT_TRUE(store_->append_timeline(id, random_timeline(4, 1000)).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "runs.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE timelines SET data = substr(data, 1, 100)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto t = store_->load_timeline(id, random_timeline(4, 1000).source);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error_text().find("timeline of run " + std::to_string(id)), std::string::npos)
      << t.error_text();
}

TEST_F(StoreRuns, HardwareProfilesNewestWins) {
  const nlohmann::json old_profile = {{"gemm_tflops", {{"bf16", 610.0}}}};
  const nlohmann::json new_profile = {{"gemm_tflops", {{"bf16", 655.5}}}, {"allreduce_gbps", 410}};
  auto first = store_->save_hardware_profile("NVIDIA H100", old_profile);
  auto second = store_->save_hardware_profile("NVIDIA H100", new_profile);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(store_->save_hardware_profile("NVIDIA A100", old_profile).ok());
  auto latest = store_->latest_hardware_profile("NVIDIA H100");
  ASSERT_TRUE(latest.ok()) << latest.error_text();
  EXPECT_EQ(latest->id, *second);
  EXPECT_EQ(latest->profile, new_profile);
  EXPECT_EQ(store_->load_hardware_profile(*first)->profile, old_profile);
  auto none = store_->latest_hardware_profile("TPU");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error_text().find("'TPU'"), std::string::npos);
  EXPECT_FALSE(store_->save_hardware_profile("", old_profile).ok());
}

}  // namespace
}  // namespace plansight::store
