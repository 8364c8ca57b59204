// ProbeRunner: one plansight-probe run as a child process (QProcess; DESIGN §1: a probe that
// crashes or hangs never takes the window down). The GUI thread only moves bytes: every stdout
// line goes to a one-thread worker that reads it (core::accept_probe_line) and keeps the run in
// the store exactly as `plansight probe` does (core::probe_run_store.h: the row on "started",
// the result in one transaction, the reason in the notes when there is no result). Cancel
// sends SIGINT: the probe finishes its current step, reports what it measured and exits 130,
// and that partial result is stored and shown; a second Cancel kills it.
#pragma once

#include <csignal>

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "plansight/gui/job_runner.h"
#include "plansight/gui/timeline_index.h"
#include "plansight/store/run_summary.h"

class QProcess;

namespace plansight::gui {

// What the Probe page's form says, as `plansight probe` flags would.
struct ProbeSettings {
  // tiny | small | gpt2-124m. small by default: its step (about 20 ms on two cores) is long
  // enough that host overheads do not dominate it, and it is the model whose prediction the probe
  // accuracy benchmark measures (bench/probe_accuracy.sh: 20 layouts within -14 %..+2 %); tiny's
  // 2 ms step is mostly host gaps.
  QString model = QStringLiteral("small");
  int tp = 1, pp = 1, vpp = 1, dp = 1, zero_stage = 0;
  QString recompute = QStringLiteral("none");  // none | selective | full
  QString schedule = QStringLiteral("1f1b");   // gpipe | 1f1b | interleaved
  int steps = 10;
  double learning_rate = 3e-4;  // AdamW's, reached after lr_warmup_steps (linear warm-up)
  int lr_warmup_steps = 0;
  QString data = QStringLiteral("synthetic");  // synthetic | corpus (the embedded English text)
  QString device = QStringLiteral("cpu");  // cpu | cuda | auto
  QString precision = QStringLiteral("fp32");  // fp32 | tf32 | bf16 | fp16 (the last three on a GPU)
  enum class Calibration { off, quick, full } calibration = Calibration::quick;
  QString name;  // empty: the CLI's default name ("probe tiny tp1 pp1 dp1 1f1b")
  // Empty: the ranks are threads of one plansight-probe. Else the launcher command that starts
  // one probe process per rank ("mpirun -np 4", "srun -n 4"), as `plansight probe --launcher`.
  QString launcher;
};

// The request plansight-probe reads on stdin for these settings, with the keys `plansight
// probe` writes; the probe validates it (one place owns the rules) and names the bad field.
nlohmann::json probe_request(const ProbeSettings& settings);
// The child's arguments: the request from stdin and the calibration level.
QStringList probe_arguments(const ProbeSettings& settings);

struct ProbeStep {
  std::int64_t step = 0;  // 1-based
  double loss = 0;        // NaN when the loss diverged
  double seconds = 0;
};

struct ProbeOutcome {
  enum class Kind { complete, stopped, failed };
  Kind kind = Kind::failed;
  QString message;                // what the page says: the result, or why there is none
  std::int64_t run_id = 0;        // the stored run; 0 when nothing could be stored
  QString device;
  std::int64_t steps_requested = 0;
  std::vector<ProbeStep> steps;   // as measured (fewer than requested when stopped)
  std::optional<store::RunSummary> summary;  // as stored: median step, loss, memory per category
  std::shared_ptr<const TimelineIndex> timeline;  // the measured step; null when none
};

class ProbeRunner : public QObject {
  Q_OBJECT

 public:
  enum class State { idle, running, calibrating, cancelling };

  // db_path empty: the user's run store.
  explicit ProbeRunner(QString db_path = {}, QObject* parent = nullptr);
  ~ProbeRunner() override;  // stops a running probe (SIGINT, then kill) and waits for the worker

  // The program to start instead of the one find_probe_executable() finds (tests).
  void setProgram(const QString& path) { program_override_ = path; }
  void setDatabasePath(const QString& path) { db_path_ = path; }

  // False when a run is already going; otherwise finished() always follows.
  bool start(const ProbeSettings& settings);
  void cancel();  // SIGINT; when already cancelling, kill
  State state() const { return state_; }
  bool isRunning() const { return state_ != State::idle; }
  const ProbeOutcome& outcome() const { return outcome_; }

 signals:
  void stateChanged();
  void progress(qint64 step, qint64 steps, double loss, double elapsed_s, double eta_s);
  void finished();

 private:
  struct Job;
  void readOutput();
  void onProcessFinished(int exit_code, bool crashed);
  // Ends a run that never started (its request refused, or no program to start): `message` says why.
  void endBeforeStart(const QString& message);
  void post(QByteArray line);  // one stdout line, read on the worker
  void finish(std::shared_ptr<ProbeOutcome> outcome);
  void setState(State state);

  QString db_path_;
  QString program_override_;
  QProcess* process_ = nullptr;
  int stop_signal_ = SIGINT;  // SIGUSR1 under a launcher (cli/launcher.h)
  std::shared_ptr<Job> job_;
  QByteArray pending_;        // stdout after the last newline
  QByteArray stderr_;         // kept for the message of a run without a result
  State state_ = State::idle;
  ProbeOutcome outcome_;
  JobRunner::Job run_;        // the current run: its lines, its end and its posts
  JobRunner jobs_;            // one thread: parsing and the store, in arrival order; last member
};

}  // namespace plansight::gui
