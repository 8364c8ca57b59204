// Store: one connection to the run database. Opening checks the file (a Plansight store, not
// newer than this program), switches it to WAL and migrates it; every write is one transaction,
// or joins the caller's (see transaction()). Not thread-safe: give each thread its own Store —
// WAL lets one connection read while another writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"
#include "plansight/store/run.h"
#include "plansight/store/run_summary.h"
#include "plansight/store/schema.h"
#include "plansight/store/status.h"
#include "plansight/store/transaction.h"

struct sqlite3;

namespace plansight::store {

// Reading commands (listing, showing, comparing, exporting runs) open for reading: the file
// must exist (nothing is created, no folder either), nothing is written (no WAL switch, no
// migration, no marking of interrupted runs), and a file or folder the user may not write to
// still opens. Commands that change runs already stored (deleting one) open to modify: for
// writing, but the file must exist as for reading, so a mistyped path creates nothing. Every
// other use (storing a run) opens for writing and creates the file when missing.
enum class Access { read_write, read_only, modify };

struct OpenOptions {
  // The migrations to apply. Tests pass a prefix (to build an old file) or an extended list (to
  // exercise migrating); everything else keeps this program's schema.
  std::span<const Migration> migrations = schema_migrations();
  int busy_timeout_ms = 5000;  // how long a writer waits for another writer's lock
  Access access = Access::read_write;
};

class Store {
 public:
  // For writing: creates the file (and its folders) when missing, and marks runs left running by
  // a process of this host that has ended as failed (interrupted; see warnings()).
  static Result<Store> open(const std::filesystem::path& path, const OpenOptions& options = {});
  // resolve_db_path(db_arg) then open().
  static Result<Store> open_default(const std::string& db_arg = {}, Access access = Access::read_write);
  bool read_only() const { return read_only_; }

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const { return schema_version_; }
  // Non-fatal findings from open(), e.g. a filesystem where WAL mode is unavailable.
  const std::vector<Diagnostic>& warnings() const { return warnings_; }

  // Groups several calls into one atomic write; calls made while it is open join it.
  Result<Transaction> transaction();

  // Runs.
  Result<std::int64_t> create_run(const NewRun& run);
  Status update_status(std::int64_t run_id, RunStatus status);
  Status update_summary(std::int64_t run_id, const RunSummary& summary);  // also refreshes run_metrics
  Status update_plan(std::int64_t run_id, const nlohmann::json& plan);
  Status rename_run(std::int64_t run_id, const std::string& name);
  Status set_notes(std::int64_t run_id, const std::string& notes);
  Status delete_run(std::int64_t run_id);  // its timelines and metrics go with it
  Result<RunRecord> get_run(std::int64_t run_id);
  Result<std::vector<RunRecord>> list_runs(const RunFilter& filter = {});  // newest first
  // Every run's value of one metric (as written by update_summary), newest run first.
  Result<std::vector<MetricValue>> metric_across_runs(const std::string& metric,
                                                      const RunFilter& filter = {});

  // Timelines: at most one per (run, source).
  Result<TimelineInfo> append_timeline(std::int64_t run_id, const estimator::Timeline& timeline);
  Result<estimator::Timeline> load_timeline(std::int64_t run_id, estimator::TimelineSource source);
  Result<std::vector<TimelineInfo>> list_timelines(std::int64_t run_id);

  // Hardware profiles (the probe's calibration), newest wins for a device.
  Result<std::int64_t> save_hardware_profile(const std::string& device, const nlohmann::json& profile);
  Result<HardwareProfileRecord> load_hardware_profile(std::int64_t profile_id);
  Result<HardwareProfileRecord> latest_hardware_profile(const std::string& device);

  // PRAGMA integrity_check: "ok", or SQLite's list of problems.
  Result<std::string> integrity_check();

 private:
  static Result<Store> open_for_reading(const std::filesystem::path& path, const OpenOptions& options);
  struct CloseDb {
    void operator()(sqlite3* db) const;
  };
  Store(std::unique_ptr<sqlite3, CloseDb> db, std::filesystem::path path)
      : db_(std::move(db)), path_(std::move(path)) {}
  Status set_run_text(std::int64_t run_id, const char* column, const std::string& value);
  Status require_run(std::int64_t run_id);

  std::unique_ptr<sqlite3, CloseDb> db_;
  std::filesystem::path path_;
  bool read_only_ = false;
  bool track_writers_ = false;  // the file has run_writers (schema 2 on)
  int schema_version_ = 0;
  std::vector<Diagnostic> warnings_;
};

}  // namespace plansight::store
