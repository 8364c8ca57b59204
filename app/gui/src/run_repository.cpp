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

RunRepository::RunRepository(QString db_path, QObject* parent) : QObject(parent), db_path_(std::move(db_path)) {
  pool_.setMaxThreadCount(1);  // one connection, requests in order
}

RunRepository::~RunRepository() {
  pool_.clear();
  pool_.waitForDone();
}

void RunRepository::run(std::function<void()> job) {
  ++jobs_;
  pool_.start([this, job = std::move(job)] {
    job();
    QMetaObject::invokeMethod(
        this, [this] { finished(); }, Qt::QueuedConnection);
  });
}

void RunRepository::finished() {
  if (--jobs_ == 0) emit idle();
}

void RunRepository::setDatabasePath(const QString& path) {
  db_path_ = path;
  location_.clear();
  runs_.clear();
  emit runsChanged();
  refresh();  // a new generation: results still coming from the old database are dropped
}

void RunRepository::refresh() {
  const std::uint64_t generation = ++refresh_generation_;
  run([this, generation, path = db_path_] {
    auto db = open_store(path);
    if (!db) {
      const QString error = text_of(db.errors());
      QMetaObject::invokeMethod(
          this, [this, error] { emit failed(tr("Cannot open the run store: %1").arg(error)); }, Qt::QueuedConnection);
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
    QMetaObject::invokeMethod(
        this,
        [this, generation, location, error, entries = std::move(entries)]() mutable {
          location_ = location;
          if (!error.isEmpty()) emit failed(tr("Cannot list runs: %1").arg(error));
          if (generation != refresh_generation_) return;  // a newer refresh is on its way
          runs_ = std::move(entries);
          emit runsChanged();
        },
        Qt::QueuedConnection);
  });
}

void RunRepository::loadTimeline(std::int64_t run_id, est::TimelineSource source) {
  const std::uint64_t generation = ++timeline_generation_;
  run([this, generation, run_id, source, path = db_path_] {
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
    QMetaObject::invokeMethod(
        this,
        [this, generation, loaded = std::move(loaded)]() mutable {
          if (generation != timeline_generation_) return;
          timeline_ = std::move(loaded);
          emit timelineLoaded();
        },
        Qt::QueuedConnection);
  });
}

void RunRepository::savePlan(const est::Plan& plan, const QString& name) {
  store::NewRun run_spec;
  run_spec.kind = store::RunKind::plan;
  run_spec.name = name.toStdString();
  run_spec.status = store::RunStatus::complete;
  run_spec.plan = est::to_json(plan);
  run([this, run_spec, path = db_path_] {
    auto db = open_store(path);
    QString error;
    if (!db) {
      error = text_of(db.errors());
    } else if (auto id = db->create_run(run_spec); !id) {
      error = text_of(id.errors());
    }
    QMetaObject::invokeMethod(
        this,
        [this, error] {
          if (!error.isEmpty()) emit failed(tr("Cannot save the plan as a run: %1").arg(error));
        },
        Qt::QueuedConnection);
  });
  refresh();
}

}  // namespace plansight::gui
