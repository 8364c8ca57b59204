// The GUI's access to the run store: every SQLite call runs on a worker thread with its own
// Store connection (Store is one connection per thread; WAL lets the GUI read while a probe
// writes), results come back to the GUI thread, and the latest request of each kind wins.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "plansight/estimator/plan.h"
#include "plansight/gui/timeline_index.h"
#include "plansight/store/run.h"

namespace plansight::gui {

struct RunEntry {
  store::RunRecord run;
  std::vector<store::TimelineInfo> timelines;
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

  const std::vector<RunEntry>& runs() const { return runs_; }
  const LoadedTimeline& timeline() const { return timeline_; }
  QString location() const { return location_; }  // the database file, once known
  bool isIdle() const { return jobs_ == 0; }

 signals:
  void runsChanged();
  void timelineLoaded();
  void failed(const QString& message);
  void idle();

 private:
  template <class Job>
  void run(Job job);
  void finished();

  QString db_path_;
  QString location_;
  std::vector<RunEntry> runs_;
  LoadedTimeline timeline_;
  std::uint64_t refresh_generation_ = 0;
  std::uint64_t timeline_generation_ = 0;
  int jobs_ = 0;
  QThreadPool pool_;
};

}  // namespace plansight::gui
