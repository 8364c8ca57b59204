// Store access off the GUI thread (see run_repository.h).
#include "plansight/gui/run_repository.h"

#include "plansight/estimator/json_io.h"
#include "plansight/store/store.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

Result<store::Store> open_store(const QString& path) {
  return path.isEmpty() ? store::Store::open_default() : store::Store::open(path.toStdString());
}

QString text_of(const std::vector<Diagnostic>& errors) { return QString::fromStdString(join_messages(errors)); }

}  // namespace

// One worker thread: one connection at a time, requests in order.
RunRepository::RunRepository(QString db_path, QObject* parent)
    : QObject(parent), db_path_(std::move(db_path)), jobs_(this, 1) {
  connect(&jobs_, &JobRunner::idle, this, &RunRepository::idle);
}

RunRepository::~RunRepository() = default;

void RunRepository::setDatabasePath(const QString& path) {
  db_path_ = path;
  location_.clear();
  runs_.clear();
  emit runsChanged();
  refresh();  // a new generation: results still coming from the old database are dropped
}

void RunRepository::refresh() {
  // A newer refresh makes this one stale: only the latest list reaches the page.
  jobs_.start(kRefresh, [this, path = db_path_](const JobRunner::Job& job) {
    auto db = open_store(path);
    if (!db) {
      const QString error = text_of(db.errors());
      job.post([this, error] { emit failed(tr("Cannot open the run store: %1").arg(error)); });
      return;
    }
    std::vector<RunEntry> entries;
    QString error;
    auto runs = db->list_runs();
    if (!runs) {
      error = text_of(runs.errors());
    } else {
      for (auto& r : *runs) {
        RunEntry entry{std::move(r), {}};
        if (auto timelines = db->list_timelines(entry.run.id)) entry.timelines = std::move(*timelines);
        entries.push_back(std::move(entry));
      }
    }
    const QString location = QString::fromStdString(db->path().string());
    job.post([this, location, error, entries = std::move(entries)]() mutable {
      location_ = location;
      if (!error.isEmpty()) emit failed(tr("Cannot list runs: %1").arg(error));
      runs_ = std::move(entries);
      emit runsChanged();
    });
  });
}

void RunRepository::loadTimeline(std::int64_t run_id, est::TimelineSource source) {
  jobs_.start(kTimeline, [this, run_id, source, path = db_path_](const JobRunner::Job& job) {
    LoadedTimeline loaded;
    loaded.run_id = run_id;
    loaded.source = source;
    auto db = open_store(path);
    if (!db) {
      loaded.error = text_of(db.errors());
    } else if (auto timeline = db->load_timeline(run_id, source)) {
      loaded.index = std::make_shared<const TimelineIndex>(std::move(timeline).value());
    } else {
      loaded.error = text_of(timeline.errors());
    }
    job.post([this, loaded = std::move(loaded)]() mutable {
      timeline_ = std::move(loaded);
      emit timelineLoaded();
    });
  });
}

void RunRepository::savePlan(const est::Plan& plan, const QString& name) {
  store::NewRun run_spec;
  run_spec.kind = store::RunKind::plan;
  run_spec.name = name.toStdString();
  run_spec.status = store::RunStatus::complete;
  run_spec.plan = est::to_json(plan);
  jobs_.startOwn([this, run_spec, path = db_path_](const JobRunner::Job& job) {
    auto db = open_store(path);
    QString error;
    if (!db) {
      error = text_of(db.errors());
    } else if (auto id = db->create_run(run_spec); !id) {
      error = text_of(id.errors());
    }
    if (!error.isEmpty()) job.post([this, error] { emit failed(tr("Cannot save the plan as a run: %1").arg(error)); });
  });
  refresh();
}

}  // namespace plansight::gui
