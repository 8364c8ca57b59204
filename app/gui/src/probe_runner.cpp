// ProbeRunner (see probe_runner.h). The child is a QProcess on the GUI thread (asynchronous, so
// nothing waits); the job runner's worker owns the run's ProbeEvents and its Store connection,
// and every job of a run is that run's job, so that what a replaced run posts back is dropped.
#include "plansight/gui/probe_runner.h"

#include <QPointer>
#include <QProcess>
#include <cmath>
#include <csignal>
#include <optional>

#include "plansight/core/child_process.h"
#include "plansight/core/launcher.h"
#include "plansight/core/probe_events.h"
#include "plansight/core/probe_run_store.h"
#include "plansight/gui/format.h"
#include "plansight/store/store.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

constexpr qsizetype kMaxStderrBytes = 64 * 1024;  // enough for any message; a runaway child cannot fill memory

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

nlohmann::json probe_request(const ProbeSettings& s) {
  // The keys and defaults of `plansight probe`'s request_from_args(): the probe fills in the rest.
  nlohmann::json layout = {{"tp", s.tp},           {"pp", s.pp},
                           {"vpp", s.vpp},         {"dp", s.dp},
                           {"zero_stage", s.zero_stage}, {"recompute", s.recompute.toStdString()},
                           {"schedule", s.schedule.toStdString()}};
  return {{"model", s.model.toStdString()},
          {"layout", layout},
          {"steps", s.steps},
          {"learning_rate", s.learning_rate},
          {"lr_warmup_steps", s.lr_warmup_steps},
          {"data", s.data.toStdString()},
          {"device", s.device.toStdString()},
          {"precision", s.precision.toStdString()},
          {"calibrate", s.calibration != ProbeSettings::Calibration::off}};
}

QStringList probe_arguments(const ProbeSettings& s) {
  return {QStringLiteral("-"), QStringLiteral("--calibration"),
          s.calibration == ProbeSettings::Calibration::full ? QStringLiteral("full") : QStringLiteral("quick")};
}

// Everything one run's worker jobs share. Only worker jobs touch it, one at a time.
struct ProbeRunner::Job {
  QString db_path;
  std::string name;
  probe::ProbeRequest request;
  std::int64_t steps_requested = 0;
  core::ProbeEvents events;
  std::optional<store::Store> db;
  std::vector<Diagnostic> store_errors;
  std::int64_t run_id = 0;
  std::string device;

  store::Store* store() {
    if (db) return &*db;
    if (!store_errors.empty()) return nullptr;
    auto opened = db_path.isEmpty() ? store::Store::open_default() : store::Store::open(db_path.toStdString());
    if (!opened) {
      store_errors = opened.errors();
      return nullptr;
    }
    db.emplace(std::move(*opened));
    return &*db;
  }
};

// One worker thread for the runner's lifetime: lines are read in arrival order, and the Store
// stays on the thread that opened it.
ProbeRunner::ProbeRunner(QString db_path, QObject* parent) : QObject(parent), db_path_(std::move(db_path)), jobs_(this, 1) {}

ProbeRunner::~ProbeRunner() {
  // What the worker still posts goes to an object being destroyed and is dropped with it; the
  // worker's store writes still run (the run is stored, not left "running"), and are waited for.
  if (process_) {
    process_->disconnect(this);
    if (process_->state() != QProcess::NotRunning) {
      // SIGINT first, so the probe reports what it measured and the run is stored, not left "running".
      state_ = State::cancelling;
      ::kill(static_cast<pid_t>(process_->processId()), stop_signal_);
      if (!process_->waitForFinished(3000)) {
        process_->kill();
        process_->waitForFinished(1000);
      }
      readOutput();
      onProcessFinished(process_->exitCode(), process_->exitStatus() == QProcess::CrashExit);
    }
  }
  jobs_.waitForDone();
}

bool ProbeRunner::start(const ProbeSettings& settings) {
  if (isRunning()) return false;
  run_ = jobs_.begin();  // what an earlier run still posts is dropped from here on
  const JobRunner::JobId run_id = run_.id();
  outcome_ = {};
  pending_.clear();
  stderr_.clear();
  job_ = std::make_shared<Job>();
  job_->db_path = db_path_;
  job_->name = settings.name.trimmed().toStdString();
  job_->steps_requested = settings.steps;
  setState(State::running);
  // The probe protocol's own reader checks the request before anything starts: a field the
  // probe would refuse is refused here with the probe's message, naming the field.
  auto checked = probe::probe_request_from_json(probe_request(settings));
  if (!checked) {
    endBeforeStart(tr("The request is invalid, so the probe was not started: %1").arg(q(join_messages(checked.errors()))));
    return true;
  }
  job_->request = std::move(*checked);

  QString program = program_override_;
  if (program.isEmpty()) {
    auto found = core::find_probe_executable();
    if (!found) {
      endBeforeStart(tr("The probe could not start: %1").arg(q(found.error_text())));
      return true;
    }
    program = q(*found);
  }
  QStringList arguments = probe_arguments(settings);
  stop_signal_ = core::stop_signal(false);
  if (!settings.launcher.trimmed().isEmpty()) {
    // `<launcher words> plansight-probe <arguments>`: one probe process per rank.
    auto words = core::launcher_words(settings.launcher.toStdString());
    if (!words) {
      endBeforeStart(tr("The probe could not start: %1").arg(q(words.error_text())));
      return true;
    }
    auto launcher = core::find_program(words->front());
    if (!launcher) {
      endBeforeStart(tr("The probe could not start: %1").arg(q(launcher.error_text())));
      return true;
    }
    QStringList launched;
    for (std::size_t i = 1; i < words->size(); ++i) launched << q((*words)[i]);
    launched << program << arguments;
    arguments = launched;
    program = q(*launcher);
    stop_signal_ = core::stop_signal(true);
  }
  process_ = new QProcess(this);
  process_->setProgram(program);
  process_->setArguments(arguments);
  const QByteArray request = QByteArray::fromStdString(probe::to_json(job_->request).dump());
  connect(process_, &QProcess::started, this, [this, request] {
    process_->write(request);
    process_->closeWriteChannel();  // the probe reads all of stdin before it starts
  });
  connect(process_, &QProcess::readyReadStandardOutput, this, &ProbeRunner::readOutput);
  connect(process_, &QProcess::readyReadStandardError, this, [this] {
    stderr_ += process_->readAllStandardError();
    if (stderr_.size() > kMaxStderrBytes) stderr_.truncate(kMaxStderrBytes);
  });
  connect(process_, &QProcess::errorOccurred, this, [this, program, run_id](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || !jobs_.isLatest(0, run_id)) return;  // crashes end in finished()
    endBeforeStart(tr("The probe could not start: %1").arg(tr("Cannot start %1: %2").arg(program, process_->errorString())));
  });
  connect(process_, &QProcess::finished, this, [this](int exit_code, QProcess::ExitStatus status) {
    readOutput();
    onProcessFinished(exit_code, status == QProcess::CrashExit);
  });
  process_->start();
  return true;
}

void ProbeRunner::cancel() {
  if (!process_ || process_->state() == QProcess::NotRunning) return;
  if (state_ == State::cancelling) {
    process_->kill();  // a second Cancel: the probe did not stop after its step
    return;
  }
  ::kill(static_cast<pid_t>(process_->processId()), stop_signal_);
  setState(State::cancelling);
}

void ProbeRunner::readOutput() {
  if (!process_) return;
  pending_ += process_->readAllStandardOutput();
  qsizetype begin = 0;
  for (qsizetype nl; (nl = pending_.indexOf('\n', begin)) >= 0; begin = nl + 1) {
    post(pending_.mid(begin, nl - begin));
  }
  pending_.remove(0, begin);
}

void ProbeRunner::post(QByteArray line) {
  jobs_.run(run_, [this, job = job_, line = std::move(line)](const JobRunner::Job& run) {
    const std::string kind =
        core::accept_probe_line(job->events, std::string_view(line.constData(), static_cast<std::size_t>(line.size())));
    if (kind == "started" && job->run_id == 0) {
      job->device = job->events.started->device;
      if (store::Store* db = job->store()) {
        auto id = db->create_run(core::started_probe_run(*job->events.started, job->name));
        if (id) job->run_id = *id;
        else job->store_errors = id.errors();
      }
    }
    if (kind != "progress" && kind != "calibrating") return;
    const probe::ProgressEvent p = job->events.last_progress.value_or(probe::ProgressEvent{});
    run.post([this, kind, p] {
      if (!isRunning()) return;
      if (kind == "calibrating") {
        if (state_ == State::running) setState(State::calibrating);
        return;
      }
      emit progress(p.step, p.steps, p.loss, p.elapsed_s, p.eta_s);
    });
  });
}

void ProbeRunner::endBeforeStart(const QString& message) {
  auto out = std::make_shared<ProbeOutcome>();
  out->kind = ProbeOutcome::Kind::failed;
  out->message = message;
  out->steps_requested = job_ ? job_->steps_requested : 0;
  // Queued, so that start() returns before finished() as it does for a run that starts.
  run_.post([this, out] { finish(out); });
}

void ProbeRunner::onProcessFinished(int exit_code, bool crashed) {
  if (!pending_.isEmpty()) post(std::exchange(pending_, {}));  // a last line without newline
  const bool interrupted = state_ == State::cancelling;
  const std::string stderr_text = stderr_.toStdString();
  jobs_.run(run_, [this, job = job_, exit_code, crashed, interrupted, stderr_text](const JobRunner::Job& run) {
    auto out = std::make_shared<ProbeOutcome>();
    out->steps_requested = job->steps_requested;
    const core::ProbeEvents& ev = job->events;
    out->device = q(job->device);
    QStringList notes;
    if (!ev.result) {
      const std::string how = crashed ? "plansight-probe crashed (ended by a signal) before it reported a result"
                                      : core::describe_child_exit(core::ChildExit{exit_code, 0, {}});
      const std::vector<Diagnostic> errors = core::probe_failure(ev, how, stderr_text);
      out->kind = ProbeOutcome::Kind::failed;
      out->message = interrupted ? tr("Cancelled before the probe reported a result: %1").arg(q(join_messages(errors)))
                                 : tr("The probe failed: %1").arg(q(join_messages(errors)));
      if (job->run_id > 0 && job->store()) {
        if (auto s = core::mark_probe_run_unfinished(*job->store(), job->run_id, errors, interrupted); !s) {
          out->message += tr(" (run %1 could not be marked: %2)").arg(job->run_id).arg(q(s.error_text()));
        }
        out->run_id = job->run_id;
      }
    } else {
      const probe::ProbeResult& result = *ev.result;
      const probe::ProbeRequest& request = ev.started ? ev.started->request : job->request;
      const bool stopped = result.stopped_early;
      out->kind = stopped ? ProbeOutcome::Kind::stopped : ProbeOutcome::Kind::complete;
      out->summary = core::summary_of(result, request);
      for (const auto& step : result.steps) out->steps.push_back({step.step, step.loss, step.seconds});
      out->timeline = std::make_shared<const TimelineIndex>(result.timeline);
      if (job->run_id > 0 && job->store()) {
        auto stored = core::store_probe_result(*job->store(), job->run_id, result, request, job->device);
        if (stored) {
          out->run_id = *stored;
          // What the store kept (with the link to the run's hardware profile), so the page shows that.
          if (auto kept = job->store()->get_run(*stored); kept && kept->summary) out->summary = kept->summary;
        } else {
          notes << tr("run %1 could not be stored: %2").arg(job->run_id).arg(q(stored.error_text()));
        }
      }
      const QString step = out->summary->step_time_s ? format_seconds(*out->summary->step_time_s) : QStringLiteral("—");
      const auto done = static_cast<qlonglong>(out->steps.size());
      if (stopped) {
        out->message = tr("Stopped after %1 of %2 steps (median step %3); the partial result is run %4, status cancelled.")
                           .arg(done).arg(out->steps_requested).arg(step).arg(out->run_id);
      } else {
        out->message = tr("Run %1 finished: %2 steps, median step %3. It is on the Runs page; Compare with prediction "
                          "sets it beside the estimator's prediction of the same configuration.")
                           .arg(out->run_id).arg(done).arg(step);
      }
      if (exit_code != 0 && exit_code != 130) notes << tr("plansight-probe then exited with status %1").arg(exit_code);
    }
    if (!job->store_errors.empty()) {
      notes << tr("nothing was stored: %1").arg(q(join_messages(job->store_errors)));
    }
    if (!notes.isEmpty()) out->message += QStringLiteral(" ") + tr("Note: %1.").arg(notes.join(QStringLiteral("; ")));
    run.post([this, out] { finish(out); });
  });
}

void ProbeRunner::finish(std::shared_ptr<ProbeOutcome> outcome) {
  if (process_) {
    process_->deleteLater();
    process_ = nullptr;
  }
  outcome_ = std::move(*outcome);
  setState(State::idle);
  emit finished();
}

void ProbeRunner::setState(State state) {
  if (state_ == state) return;
  state_ = state;
  emit stateChanged();
}

}  // namespace plansight::gui
