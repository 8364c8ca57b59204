// The store's schema, version by version. Append a migration to change it; never edit one that
// has shipped, since files in users' data folders were built by it. Tables are STRICT (SQLite
// ≥ 3.37, Debian 12 has 3.40) so that a wrong type is an error, not a silent conversion.
#include "plansight/store/schema.h"

#include <array>

namespace plansight::store {
namespace {

// Version 1.
// - runs.id is AUTOINCREMENT so that the id of a deleted run is never handed out again: a GUI
//   holding a stale id gets "not found", not somebody else's run.
// - Times are UTC text with milliseconds (ISO 8601 sorts as text); the index serves "newest first".
// - plan_json / summary_json are JSON text; the summary's scalar metrics are copied into
//   run_metrics so that runs can be compared and sorted in SQL without parsing JSON.
// - A timeline is one row per (run, source): its spans live in `data` (timeline_codec.h, format
//   version in `encoding`); the counts and bounds beside it let a run list show a timeline
//   without decoding it. Rowid table: SQLite keeps large blobs in overflow pages of rowid rows.
constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  kind         TEXT NOT NULL CHECK (kind IN ('probe', 'import', 'plan')),
  name         TEXT NOT NULL CHECK (length(trim(name)) > 0),
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at  TEXT,
  device       TEXT NOT NULL DEFAULT '',
  status       TEXT NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'complete', 'failed', 'cancelled')),
  plan_json    TEXT,
  summary_json TEXT,
  notes        TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX runs_newest ON runs (created_at DESC, id DESC);
CREATE INDEX runs_by_kind ON runs (kind, created_at DESC, id DESC);

CREATE TABLE timelines (
  run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  source      TEXT NOT NULL CHECK (source IN ('predicted', 'measured', 'imported')),
  title       TEXT NOT NULL DEFAULT '',
  rank_count  INTEGER NOT NULL CHECK (rank_count >= 0),
  track_count INTEGER NOT NULL CHECK (track_count >= 0),
  span_count  INTEGER NOT NULL CHECK (span_count >= 0),
  begin_ns    INTEGER NOT NULL,
  end_ns      INTEGER NOT NULL,
  encoding    INTEGER NOT NULL,
  data        BLOB NOT NULL,
  created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (run_id, source)
) STRICT;

CREATE TABLE run_metrics (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  name   TEXT NOT NULL,
  value  REAL NOT NULL,
  PRIMARY KEY (run_id, name)
) STRICT, WITHOUT ROWID;
CREATE INDEX run_metrics_by_name ON run_metrics (name, run_id);

CREATE TABLE hardware_profiles (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  device       TEXT NOT NULL,
  profile_json TEXT NOT NULL
) STRICT;
CREATE INDEX hardware_profiles_by_device ON hardware_profiles (device, id DESC);
)sql";

// Version 2: the process writing a run that is still running (its host and pid), so that a run
// left "running" by a process that was killed or crashed is marked failed (interrupted) the next
// time the store is opened for writing, instead of staying "running" forever.
constexpr std::string_view kVersion2 = R"sql(
CREATE TABLE run_writers (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  host   TEXT NOT NULL,
  pid    INTEGER NOT NULL CHECK (pid > 0)
) STRICT;
)sql";

constexpr std::array kMigrations = {
    Migration{1, "runs, timelines, run_metrics, hardware_profiles", kVersion1},
    Migration{2, "run_writers: who writes a running run", kVersion2},
};

}  // namespace

std::span<const Migration> schema_migrations() { return kMigrations; }
int latest_schema_version() { return kMigrations.back().version; }

}  // namespace plansight::store
