// RunRepository's changes and comparisons (see run_repository.h): rename, delete, import a
// trace, diff two runs. Each runs on the repository's worker with its own Store connection, like
// every store call of the GUI; the store and the importer report errors as values, and the
// import job also stops anything thrown (a trace larger than memory) at this boundary.
#include <QFileInfo>
#include <exception>

#include "plansight/core/run_lookup.h"
#include "plansight/core/trace_import_store.h"
#include "plansight/gui/format.h"
#include "plansight/gui/run_repository.h"
#include "plansight/interop/trace_import.h"
#include "plansight/store/store.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

Result<store::Store> open_db(const QString& path) {
  return path.isEmpty() ? store::Store::open_default() : store::Store::open(path.toStdString());
}

QString q(const std::string& s) { return QString::fromStdString(s); }

QString title_of(const core::LoadedRun& r) {
  return QStringLiteral("run %1: %2 (%3)").arg(r.run.id).arg(q(r.run.name), QString::fromLatin1(est::to_string(r.timeline.source).data()));
}

}  // namespace

void RunRepository::modify(std::function<store::Status(store::Store&)> change, QString done, QString failure) {
  jobs_.startOwn([this, change = std::move(change), done, failure, path = db_path_](const JobRunner::Job& job) {
    auto db = open_db(path);
    QString error;
    if (!db) {
      error = q(db.error_text());
    } else if (auto s = change(*db); !s) {
      error = q(s.error_text());
    }
    job.post([this, error, done, failure] {
      if (error.isEmpty()) emit changed(done);
      else emit failed(failure.arg(error));
    });
  });
  refresh();
}

void RunRepository::renameRun(std::int64_t run_id, const QString& name) {
  const std::string text = name.trimmed().toStdString();
  modify([run_id, text](store::Store& db) { return db.rename_run(run_id, text); },
         tr("Renamed run %1 to \"%2\"").arg(run_id).arg(name.trimmed()), tr("Cannot rename run %1: %2").arg(run_id));
}

void RunRepository::deleteRun(std::int64_t run_id) {
  modify([run_id](store::Store& db) { return db.delete_run(run_id); }, tr("Deleted run %1").arg(run_id),
         tr("Cannot delete run %1: %2").arg(run_id));
}

void RunRepository::importTrace(const QString& path, const QString& name) {
  jobs_.startOwn([this, path, name, db_path = db_path_](const JobRunner::Job& job) {
    QString error, summary;
    qint64 run_id = 0;
    try {
      const std::filesystem::path file = path.toStdString();
      auto trace = interop::import_trace(file);  // read before the store opens: a bad trace stores nothing
      if (!trace) {
        error = q(trace.error_text());
      } else if (auto db = open_db(db_path); !db) {
        error = q(db.error_text());
      } else if (auto stored = core::store_imported_trace(*db, *trace, file, name.trimmed().toStdString()); !stored) {
        error = q(stored.error_text());
      } else {
        run_id = stored->run_id;
        summary = tr("Imported run %1 (%2): %n rank(s), %3 spans, %4 collectives, window %5", "",
                     static_cast<int>(trace->ranks.size()))
                      .arg(run_id)
                      .arg(q(stored->name))
                      .arg(format_count(static_cast<double>(stored->spans)))
                      .arg(trace->collectives.size())
                      .arg(format_seconds(stored->window_s));
        if (!trace->warnings.empty()) {
          summary += tr("; %n warning(s), first: %1", "", static_cast<int>(trace->warnings.size()))
                         .arg(q(trace->warnings.front().to_string()));
        }
      }
    } catch (const std::exception& e) {
      error = q(e.what());
    }
    job.post([this, path, error, summary, run_id] {
      if (error.isEmpty()) emit imported(run_id, summary);
      else emit failed(tr("Cannot import %1: %2").arg(QFileInfo(path).fileName(), error));
    });
  });
  refresh();
}

void RunRepository::diffRuns(std::int64_t a, std::int64_t b) {
  jobs_.start(kDiff, [this, a, b, path = db_path_](const JobRunner::Job& job) {
    RunDiff out;
    out.a = a;
    out.b = b;
    auto db = open_db(path);
    if (!db) {
      out.error = q(db.error_text());
    } else {
      // The timelines `plansight diff A B` takes (run_lookup's choice), diffed by the same function.
      auto ra = core::load_best_timeline(*db, a);
      auto rb = ra ? core::load_best_timeline(*db, b) : Result<core::LoadedRun>(ra.errors());
      if (!ra || !rb) {
        out.error = q(ra ? rb.error_text() : ra.error_text());
      } else {
        out.a_title = title_of(*ra);
        out.b_title = title_of(*rb);
        out.diff = est::diff_timelines(ra->timeline, rb->timeline);
      }
    }
    job.post([this, out = std::move(out)]() mutable {
      diff_ = std::move(out);
      emit diffReady();
    });
  });
}

}  // namespace plansight::gui
