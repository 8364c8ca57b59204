// record_writer(), forget_writer(), mark_interrupted_runs(): see run_writers.h. A process is
// alive when kill(pid, 0) succeeds or fails with EPERM (it exists, owned by someone else); ESRCH
// means it is gone (POSIX.1-2017, kill()). A reused pid keeps a dead run "running": the rarer
// error, and the safe one (a live run is never marked).
#include "run_writers.h"

#include <cerrno>
#include <csignal>
#include <unistd.h>

#include "sqlite_statement.h"

namespace plansight::store::detail {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

Status record_writer(sqlite3* db, const std::filesystem::path& path, std::int64_t run_id) {
  auto stmt = Statement::prepare(db, path, "INSERT OR REPLACE INTO run_writers (run_id, host, pid) VALUES (?, ?, ?)");
  if (!stmt) return stmt.errors();
  stmt->bind(1, run_id).bind(2, this_host()).bind(3, static_cast<std::int64_t>(getpid()));
  return stmt->run("recording the writer of run " + std::to_string(run_id));
}

Status forget_writer(sqlite3* db, const std::filesystem::path& path, std::int64_t run_id) {
  auto stmt = Statement::prepare(db, path, "DELETE FROM run_writers WHERE run_id = ?");
  if (!stmt) return stmt.errors();
  stmt->bind(1, run_id);
  return stmt->run("forgetting the writer of run " + std::to_string(run_id));
}

Result<std::vector<std::string>> mark_interrupted_runs(sqlite3* db, const std::filesystem::path& path) {
  std::vector<std::string> notes;
  std::vector<std::pair<std::int64_t, std::int64_t>> dead;  // run, pid
  {
    auto stmt = Statement::prepare(db, path,
                                   "SELECT w.run_id, w.pid FROM run_writers w JOIN runs r ON r.id = w.run_id "
                                   "WHERE r.status = 'running' AND w.host = ?");
    if (!stmt) return stmt.errors();
    stmt->bind(1, this_host());
    for (;;) {
      auto row = stmt->step("listing running runs");
      if (!row) return row.errors();
      if (!*row) break;
      const std::int64_t run = stmt->int64(0), pid = stmt->int64(1);
      if (pid == getpid()) continue;  // this process's own run
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;
      dead.emplace_back(run, pid);
    }
  }
  for (const auto& [run, pid] : dead) {
    const std::string note = "interrupted: the process that ran it (pid " + std::to_string(pid) + " on " + this_host() +
                             ") ended before the run finished";
    auto update = Statement::prepare(
        db, path,
        "UPDATE runs SET status = 'failed', finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), "
        "notes = CASE WHEN notes = '' THEN ?1 ELSE notes || char(10) || ?1 END WHERE id = ?2 AND status = 'running'");
    if (!update) return update.errors();
    update->bind(1, note).bind(2, run);
    if (auto st = update->run("marking run " + std::to_string(run) + " interrupted"); !st) return st.errors();
    if (auto st = forget_writer(db, path, run); !st) return st.errors();
    notes.push_back("run " + std::to_string(run) + " was left running; " + note + ": marked failed");
  }
  return notes;
}

}  // namespace plansight::store::detail
