// Runs: create, update, rename, delete, get and list. A row that cannot be read back (a kind this
// program does not know, damaged JSON) is an error naming the run, never a default value.
#include <cmath>

#include "in_transaction.h"
#include "run_writers.h"
#include "plansight/store/store.h"
#include "sqlite_statement.h"

namespace plansight::store {
namespace {

using detail::Statement;

constexpr std::string_view kRunColumns =
    "r.id, r.kind, r.name, r.created_at, r.finished_at, r.device, r.status, r.plan_json, r.summary_json, "
    "r.notes";

Result<RunRecord> read_run(const Statement& row) {
  RunRecord r;
  r.id = row.int64(0);
  const std::string where = "run " + std::to_string(r.id) + ": ";
  auto kind = parse_run_kind(row.text(1));
  if (!kind) return make_error("runs.kind", where + kind.errors().front().message);
  r.kind = *kind;
  r.name = row.text(2);
  r.created_at = row.text(3);
  r.finished_at = row.text(4);
  r.device = row.text(5);
  auto status = parse_run_status(row.text(6));
  if (!status) return make_error("runs.status", where + status.errors().front().message);
  r.status = *status;
  if (!row.is_null(7)) {
    auto plan = nlohmann::json::parse(row.text(7), nullptr, /*allow_exceptions=*/false);
    if (plan.is_discarded()) return make_error("runs.plan_json", where + "the stored plan is not valid JSON");
    r.plan = std::move(plan);
  }
  if (!row.is_null(8)) {
    auto json = nlohmann::json::parse(row.text(8), nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded())
      return make_error("runs.summary_json", where + "the stored summary is not valid JSON");
    auto summary = summary_from_json(json);
    if (!summary) return make_error("runs.summary_json", where + summary.error_text());
    r.summary = std::move(*summary);
  }
  r.notes = row.text(9);
  return r;
}

Status check_name(const std::string& name) {
  if (name.find_first_not_of(" \t\r\n") == std::string::npos) {
    return make_error("run.name", "a run name must not be blank");
  }
  return Done{};
}

// The WHERE/ORDER/LIMIT tail for a filter over `runs r`, after `head` (which may hold a WHERE).
std::string filtered(std::string head, bool has_where, const RunFilter& filter) {
  auto add = [&](const char* clause) {
    head += has_where ? " AND " : " WHERE ";
    head += clause;
    has_where = true;
  };
  if (filter.kind) add("r.kind = :kind");
  if (filter.status) add("r.status = :status");
  head += " ORDER BY r.created_at DESC, r.id DESC";
  if (filter.limit > 0) head += " LIMIT :limit";
  return head;
}

void bind_filter(Statement& stmt, const RunFilter& filter) {
  if (filter.kind) stmt.bind(stmt.index_of(":kind"), to_string(*filter.kind));
  if (filter.status) stmt.bind(stmt.index_of(":status"), to_string(*filter.status));
  if (filter.limit > 0) stmt.bind(stmt.index_of(":limit"), filter.limit);
}

}  // namespace

Status Store::require_run(std::int64_t run_id) {
  auto stmt = Statement::prepare(db_.get(), path_, "SELECT 1 FROM runs WHERE id = ?");
  if (!stmt) return stmt.errors();
  auto row = stmt->bind(1, run_id).step("looking up a run");
  if (!row) return row.errors();
  if (!*row) return make_error("run", "no run with id " + std::to_string(run_id) + " in " + path_.string());
  return Done{};
}

Result<std::int64_t> Store::create_run(const NewRun& run) {
  if (auto st = check_name(run.name); !st) return st.errors();
  return detail::in_transaction(*this, [&]() -> Result<std::int64_t> {
    auto stmt =
        Statement::prepare(db_.get(), path_,
                           "INSERT INTO runs (kind, name, device, status, plan_json, notes, finished_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, CASE WHEN ?4 = 'running' THEN NULL "
                           "ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END)");
    if (!stmt) return stmt.errors();
    std::optional<std::string> plan;
    if (run.plan) plan = run.plan->dump();
    stmt->bind(1, to_string(run.kind)).bind(2, run.name).bind(3, run.device).bind(4, to_string(run.status));
    stmt->bind_optional(5, plan).bind(6, run.notes);
    if (auto st = stmt->run("creating run '" + run.name + "'"); !st) return st.errors();
    const auto id = static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_.get()));
    if (track_writers_ && run.status == RunStatus::running) {
      if (auto st = detail::record_writer(db_.get(), path_, id); !st) return st.errors();
    }
    return id;
  });
}

Status Store::update_status(std::int64_t run_id, RunStatus status) {
  return detail::in_transaction(*this, [&]() -> Status {
    // finished_at: the first time the run left "running"; cleared if it runs again.
    auto stmt =
        Statement::prepare(db_.get(), path_,
                           "UPDATE runs SET status = ?1, finished_at = CASE WHEN ?1 = 'running' THEN NULL "
                           "ELSE coalesce(finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) END "
                           "WHERE id = ?2");
    if (!stmt) return stmt.errors();
    stmt->bind(1, to_string(status)).bind(2, run_id);
    if (auto st = stmt->run("updating the status of run " + std::to_string(run_id)); !st) return st;
    if (sqlite3_changes(db_.get()) == 0) return require_run(run_id);
    if (!track_writers_) return Done{};
    if (status != RunStatus::running) return detail::forget_writer(db_.get(), path_, run_id);
    return detail::record_writer(db_.get(), path_, run_id);
  });
}

Status Store::update_summary(std::int64_t run_id, const RunSummary& summary) {
  return detail::in_transaction(*this, [&]() -> Status {
    const std::string doing = "storing the summary of run " + std::to_string(run_id);
    auto update = Statement::prepare(db_.get(), path_, "UPDATE runs SET summary_json = ? WHERE id = ?");
    if (!update) return update.errors();
    update->bind(1, to_json(summary).dump()).bind(2, run_id);
    if (auto st = update->run(doing); !st) return st;
    if (sqlite3_changes(db_.get()) == 0) return require_run(run_id);

    auto clear = Statement::prepare(db_.get(), path_, "DELETE FROM run_metrics WHERE run_id = ?");
    if (!clear) return clear.errors();
    if (auto st = clear->bind(1, run_id).run(doing); !st) return st;
    auto insert = Statement::prepare(db_.get(), path_,
                                     "INSERT INTO run_metrics (run_id, name, value) VALUES (?, ?, ?)");
    if (!insert) return insert.errors();
    auto put = [&](const std::string& name, double value) -> Status {
      if (!std::isfinite(value)) return Done{};  // SQLite stores NaN as NULL; the JSON keeps it
      Statement& s = *insert;
      s.bind(1, run_id).bind(2, name).bind(3, value);
      auto st = s.run(doing);
      s.reset();
      return st;
    };
    if (summary.step_time_s) {
      if (auto st = put("step_time_s", *summary.step_time_s); !st) return st;
    }
    for (const auto& [name, value] : summary.metrics) {
      if (auto st = put(name, value); !st) return st;
    }
    return Done{};
  });
}

Status Store::set_run_text(std::int64_t run_id, const char* column, const std::string& value) {
  return detail::in_transaction(*this, [&]() -> Status {
    auto stmt =
        Statement::prepare(db_.get(), path_, std::string("UPDATE runs SET ") + column + " = ? WHERE id = ?");
    if (!stmt) return stmt.errors();
    stmt->bind(1, value).bind(2, run_id);
    if (auto st = stmt->run(std::string("setting ") + column + " of run " + std::to_string(run_id)); !st)
      return st;
    if (sqlite3_changes(db_.get()) == 0) return require_run(run_id);
    return Done{};
  });
}

Status Store::update_plan(std::int64_t run_id, const nlohmann::json& plan) {
  return set_run_text(run_id, "plan_json", plan.dump());
}

Status Store::rename_run(std::int64_t run_id, const std::string& name) {
  if (auto st = check_name(name); !st) return st;
  return set_run_text(run_id, "name", name);
}

Status Store::set_notes(std::int64_t run_id, const std::string& notes) {
  return set_run_text(run_id, "notes", notes);
}

Status Store::delete_run(std::int64_t run_id) {
  return detail::in_transaction(*this, [&]() -> Status {
    auto stmt = Statement::prepare(db_.get(), path_, "DELETE FROM runs WHERE id = ?");
    if (!stmt) return stmt.errors();
    if (auto st = stmt->bind(1, run_id).run("deleting run " + std::to_string(run_id)); !st) return st;
    if (sqlite3_changes(db_.get()) == 0) return require_run(run_id);
    return Done{};
  });
}

Result<RunRecord> Store::get_run(std::int64_t run_id) {
  auto stmt = Statement::prepare(db_.get(), path_,
                                 "SELECT " + std::string(kRunColumns) + " FROM runs r WHERE r.id = ?");
  if (!stmt) return stmt.errors();
  auto row = stmt->bind(1, run_id).step("reading run " + std::to_string(run_id));
  if (!row) return row.errors();
  if (!*row) return make_error("run", "no run with id " + std::to_string(run_id) + " in " + path_.string());
  return read_run(*stmt);
}

Result<std::vector<RunRecord>> Store::list_runs(const RunFilter& filter) {
  auto stmt = Statement::prepare(
      db_.get(), path_, filtered("SELECT " + std::string(kRunColumns) + " FROM runs r", false, filter));
  if (!stmt) return stmt.errors();
  bind_filter(*stmt, filter);
  std::vector<RunRecord> runs;
  for (;;) {
    auto row = stmt->step("listing runs");
    if (!row) return row.errors();
    if (!*row) return runs;
    auto run = read_run(*stmt);
    if (!run) return run.errors();
    runs.push_back(std::move(*run));
  }
}

Result<std::vector<MetricValue>> Store::metric_across_runs(const std::string& metric,
                                                           const RunFilter& filter) {
  auto stmt = Statement::prepare(
      db_.get(), path_,
      filtered(
          "SELECT m.run_id, m.value FROM run_metrics m JOIN runs r ON r.id = m.run_id WHERE m.name = :name",
          true, filter));
  if (!stmt) return stmt.errors();
  stmt->bind(stmt->index_of(":name"), metric);
  bind_filter(*stmt, filter);
  std::vector<MetricValue> values;
  for (;;) {
    auto row = stmt->step("reading metric '" + metric + "'");
    if (!row) return row.errors();
    if (!*row) return values;
    values.push_back({stmt->int64(0), stmt->real(1)});
  }
}

}  // namespace plansight::store
