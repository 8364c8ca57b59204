// The GUI's access to the run store: every SQLite call runs on a worker thread with its own
// Store connection (Store is one connection per thread; WAL lets the GUI read while a probe
// writes), results come back to the GUI thread, and the latest request of each kind wins.
// Changes (keep a plan, rename, delete, import a trace) are followed by a refresh.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "plansight/estimator/plan.h"
#include "plansight/estimator/timeline_diff.h"
#include "plansight/gui/job_runner.h"
#include "plansight/gui/timeline_index.h"
#include "plansight/store/run.h"
#include "plansight/store/status.h"

namespace plansight::store {
class Store;
}

namespace plansight::gui {

struct RunEntry {
  store::RunRecord run;
  std::vector<store::TimelineInfo> timelines;
};

// Two runs' best timelines (imported, else measured, else predicted) and where the time moved
// between them, as `plansight diff A B` computes it (estimator::diff_timelines).
struct RunDiff {
  std::int64_t a = 0, b = 0;
  QString a_title, b_title;  // "run 3: name (measured)"
  estimator::TimelineDiff diff;
  QString error;             // non-empty: diff is empty
};

struct LoadedTimeline {
  std::int64_t run_id = 0;
  estimator::TimelineSource source = estimator::TimelineSource::measured;
  std::shared_ptr<const TimelineIndex> index;  // null on failure
  QString error;
};

class RunRepository : public QObject {
  Q_OBJECT

 public:
  // db_path empty: the user's store (store::resolve_db_path: $PLANSIGHT_DB, XDG, HOME).
  explicit RunRepository(QString db_path = {}, QObject* parent = nullptr);
  ~RunRepository() override;

  void refresh();
  void loadTimeline(std::int64_t run_id, estimator::TimelineSource source);
  // Keeps the plan as a run of kind "plan" (for comparing later), then refreshes.
  void savePlan(const estimator::Plan& plan, const QString& name);
  // Store::rename_run / delete_run, then a refresh; failed() says why one did not happen.
  void renameRun(std::int64_t run_id, const QString& name);
  void deleteRun(std::int64_t run_id);
  // A Kineto JSON file or folder, or an Nsight Systems SQLite export, read and stored as one run
  // exactly as `plansight import` does; imported() or failed() follows, then a refresh.
  void importTrace(const QString& path, const QString& name = {});
  // The difference of two runs' timelines; diffReady() follows (the latest request wins).
  void diffRuns(std::int64_t a, std::int64_t b);

  // The database the repository was given: empty means the user's default store.
  QString databasePath() const { return db_path_; }
  // Another database from now on (File > Open run database): its runs replace the list.
  void setDatabasePath(const QString& path);

  const std::vector<RunEntry>& runs() const { return runs_; }
  const LoadedTimeline& timeline() const { return timeline_; }
  const RunDiff& diff() const { return diff_; }
  QString location() const { return location_; }  // the database file, once known
  bool isIdle() const { return !jobs_.isBusy(); }

 signals:
  void runsChanged();
  void timelineLoaded();
  void diffReady();
  void imported(qint64 run_id, const QString& summary);
  void changed(const QString& message);  // a rename or delete that went through
  void failed(const QString& message);
  void idle();

 private:
  // Runs `change` on a worker's Store; reports `done` or the error, then refreshes.
  void modify(std::function<store::Status(store::Store&)> change, QString done, QString failure);

  QString db_path_;
  QString location_;
  std::vector<RunEntry> runs_;
  LoadedTimeline timeline_;
  RunDiff diff_;
  // Lanes of jobs_: a newer refresh, timeline load or diff makes the older one's result stale.
  enum Lane : JobRunner::Lane { kRefresh, kTimeline, kDiff };
  JobRunner jobs_;  // last member: destroyed first, so no job outlives what it touches
};

}  // namespace plansight::gui
