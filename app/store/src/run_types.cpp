// Spellings of the store's enums, shared by the database's CHECK constraints (schema.cpp) and
// the readers, which reject an unknown spelling rather than guess.
#include "plansight/store/run.h"

namespace plansight::store {

std::string_view to_string(RunKind kind) {
  switch (kind) {
    case RunKind::probe: return "probe";
    case RunKind::import: return "import";
    case RunKind::plan: return "plan";
  }
  return "?";
}

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::complete: return "complete";
    case RunStatus::failed: return "failed";
    case RunStatus::cancelled: return "cancelled";
  }
  return "?";
}

Result<RunKind> parse_run_kind(std::string_view text) {
  for (auto kind : {RunKind::probe, RunKind::import, RunKind::plan}) {
    if (text == to_string(kind)) return kind;
  }
  return make_error("runs.kind", "unknown run kind '" + std::string(text) + "'; valid: probe, import, plan");
}

Result<RunStatus> parse_run_status(std::string_view text) {
  for (auto status : {RunStatus::running, RunStatus::complete, RunStatus::failed, RunStatus::cancelled}) {
    if (text == to_string(status)) return status;
  }
  return make_error("runs.status", "unknown run status '" + std::string(text) +
                                       "'; valid: running, complete, failed, cancelled");
}

Result<estimator::TimelineSource> parse_timeline_source(std::string_view text) {
  using estimator::TimelineSource;
  for (auto source : {TimelineSource::predicted, TimelineSource::measured, TimelineSource::imported}) {
    if (text == estimator::to_string(source)) return source;
  }
  return make_error("timelines.source", "unknown timeline source '" + std::string(text) +
                                            "'; valid: predicted, measured, imported");
}

}  // namespace plansight::store
