// The records the store keeps: runs (a probe run, an imported trace or a saved plan), the
// timelines attached to them and hardware profiles. Plain values; plan and profile stay JSON
// so that the store never has to understand them (estimator::plan_from_json does).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"
#include "plansight/store/run_summary.h"

namespace plansight::store {

enum class RunKind : std::uint8_t { probe, import, plan };
enum class RunStatus : std::uint8_t { running, complete, failed, cancelled };

// Spellings used in the database and in JSON ("probe", "running", ...).
std::string_view to_string(RunKind kind);
std::string_view to_string(RunStatus status);
Result<RunKind> parse_run_kind(std::string_view text);
Result<RunStatus> parse_run_status(std::string_view text);
Result<estimator::TimelineSource> parse_timeline_source(std::string_view text);

struct NewRun {
  RunKind kind = RunKind::plan;
  std::string name;    // must not be blank
  std::string device;  // e.g. "NVIDIA H100 80GB HBM3" or "cpu"; may be empty for plans
  RunStatus status = RunStatus::running;
  std::optional<nlohmann::json> plan;  // estimator::to_json(Plan) or a probe request
  std::string notes;
};

struct RunRecord {
  std::int64_t id = 0;
  RunKind kind = RunKind::plan;
  std::string name;
  std::string created_at;   // UTC, ISO 8601 with milliseconds: "2025-03-01T12:00:00.123Z"
  std::string finished_at;  // set when the status leaves "running"; empty before
  std::string device;
  RunStatus status = RunStatus::running;
  std::optional<nlohmann::json> plan;
  std::optional<RunSummary> summary;
  std::string notes;
};

struct RunFilter {
  std::optional<RunKind> kind = std::nullopt;  // initialised so designated initialisers may skip it
  std::optional<RunStatus> status = std::nullopt;
  std::int64_t limit = 0;  // 0: all
};

// A timeline's row without its spans: what a run list shows before anything is decoded.
struct TimelineInfo {
  std::int64_t run_id = 0;
  estimator::TimelineSource source = estimator::TimelineSource::predicted;
  std::string title;
  std::int64_t rank_count = 0;
  std::int64_t track_count = 0;
  std::int64_t span_count = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t encoded_bytes = 0;
  std::int32_t format_version = 0;
};

struct HardwareProfileRecord {
  std::int64_t id = 0;
  std::string created_at;  // UTC, as RunRecord::created_at
  std::string device;
  nlohmann::json profile;
};

// One run's value of a named metric (run_metrics table), for comparing runs.
struct MetricValue {
  std::int64_t run_id = 0;
  double value = 0;
};

}  // namespace plansight::store
