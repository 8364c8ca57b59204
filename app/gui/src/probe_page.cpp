// Probe page (see probe_page.h): the form on the left, progress, message, summary, the measured
// timeline and the per-step and memory tables on the right.
#include "plansight/gui/probe_page.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>

#include "plansight/gui/format.h"
#include "plansight/gui/probe_memory_model.h"
#include "plansight/gui/probe_step_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/sweep_chart.h"
#include "plansight/gui/theme.h"
#include "plansight/gui/timeline_widget.h"
#include "page_widgets.h"

namespace plansight::gui {

namespace {

double share_of(const nlohmann::json& entry) { return entry.value("share", 0.0); }

// " · bf16 · tensor cores 71.8 % of kernel time (kernel-name rules)" for a GPU run; nothing for a
// CPU run, whose device report is empty.
QString tensor_core_summary(const nlohmann::json& device) {
  QString text;
  if (auto p = device.find("precision"); p != device.end() && p->is_string()) {
    text += QStringLiteral(" · ") + QString::fromStdString(p->get<std::string>());
  }
  const auto tc = device.value("tensor_cores", nlohmann::json::object());
  if (!tc.contains("step")) return text;
  return text + QObject::tr(" · tensor cores <b>%1 %</b> of kernel time (%2)")
                    .arg(format_fixed(100.0 * share_of(tc["step"]), 1))
                    .arg(QString::fromStdString(tc.value("source", std::string("?"))).toHtmlEscaped());
}

// The per-phase shares, for the summary's tooltip: "forward: 80.1 % of 12.3 ms on tensor cores".
QString tensor_core_phases(const nlohmann::json& device) {
  const auto tc = device.value("tensor_cores", nlohmann::json::object());
  QStringList lines;
  const auto by_phase = tc.value("by_phase", nlohmann::json::object());  // items() must not outlive it
  for (const auto& [phase, entry] : by_phase.items()) {
    lines << QObject::tr("%1: %2 % of %3 on tensor cores")
                 .arg(QString::fromStdString(phase))
                 .arg(format_fixed(100.0 * share_of(entry), 1))
                 .arg(format_seconds(entry.value("seconds", 0.0)));
  }
  return lines.join(QLatin1Char('\n'));
}

QComboBox* combo(const QString& name, const QStringList& items, QWidget* parent) {
  auto* c = new QComboBox(parent);
  c->setObjectName(name);
  c->addItems(items);
  return c;
}

QSpinBox* spin(const QString& name, int min, int max, QWidget* parent) {
  auto* s = new QSpinBox(parent);
  s->setObjectName(name);
  s->setRange(min, max);
  s->setGroupSeparatorShown(true);
  return s;
}


}  // namespace

ProbePage::ProbePage(RunRepository* runs, QWidget* parent)
    : QWidget(parent),
      runs_(runs),
      runner_(new ProbeRunner(runs->databasePath(), this)),
      steps_(new ProbeStepModel(this)),
      memory_(new ProbeMemoryModel(this)) {
  form_ = buildForm();
  bar_ = new QProgressBar(this);
  bar_->setObjectName(QStringLiteral("probeProgressBar"));
  bar_->setTextVisible(false);
  progress_ = new QLabel(this);
  progress_->setObjectName(QStringLiteral("probeProgress"));
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("probeMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("probeSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  view_ = new TimelineWidget(this);
  view_->setObjectName(QStringLiteral("probeTimeline"));

  auto* progress_row = new QHBoxLayout;
  progress_row->addWidget(bar_, 1);
  progress_row->addWidget(progress_, 2);
  auto* tables = new QWidget(this);
  auto* tl = new QHBoxLayout(tables);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(titled_widget(tr("Loss and time per step"), make_result_table(steps_, QStringLiteral("probeSteps"), tables), tables), 1);
  tl->addWidget(titled_widget(tr("Memory per category"), make_result_table(memory_, QStringLiteral("probeMemory"), tables), tables), 1);
  curves_ = new SweepChart(tables);
  curves_->setObjectName(QStringLiteral("probeCurves"));
  curves_->setMinimumHeight(160);
  curves_->setZeroBased(false);  // a loss falling from 5.56 to 5.51 must show
  tl->addWidget(titled_widget(tr("Loss and step time, live"), curves_, tables), 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(stepped_timeline(tr("Measured step"), view_, QStringLiteral("probeStepThrough"), split));
  split->addWidget(tables);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* results = new QVBoxLayout;
  results->addLayout(progress_row);
  results->addWidget(message_);
  results->addWidget(summary_);
  results->addWidget(split, 1);
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(form_);
  layout->addLayout(results, 1);

  connect(runner_, &ProbeRunner::stateChanged, this, &ProbePage::onStateChanged);
  connect(runner_, &ProbeRunner::progress, this, &ProbePage::onProgress);
  connect(runner_, &ProbeRunner::finished, this, &ProbePage::onFinished);
  setMessage(tr("Runs real training steps of a small GPT model on this machine (plansight-probe), measures "
                "them and stores the run, so that the Compare page can set it beside the estimator's prediction."),
             false);
  onStateChanged();
}

QWidget* ProbePage::buildForm() {
  auto* box = new QGroupBox(tr("Probe run"), this);
  auto* form = new QFormLayout(box);
  model_ = combo(QStringLiteral("probeModel"), {QStringLiteral("tiny"), QStringLiteral("small"), QStringLiteral("gpt2-124m")}, box);
  model_->setToolTip(tr("tiny: 2 layers, hidden 64; small: 4 layers, hidden 128; gpt2-124m: the real GPT-2 small (slow on a CPU)"));
  tp_ = spin(QStringLiteral("probeTp"), 1, 64, box);
  pp_ = spin(QStringLiteral("probePp"), 1, 64, box);
  vpp_ = spin(QStringLiteral("probeVpp"), 1, 64, box);
  vpp_->setToolTip(tr("Virtual stages per pipeline rank; more than 1 needs the interleaved schedule"));
  dp_ = spin(QStringLiteral("probeDp"), 1, 64, box);
  zero_ = combo(QStringLiteral("probeZero"), {QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3")}, box);
  recompute_ = combo(QStringLiteral("probeRecompute"), {QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("full")}, box);
  schedule_ = combo(QStringLiteral("probeSchedule"), {QStringLiteral("1f1b"), QStringLiteral("gpipe"), QStringLiteral("interleaved")}, box);
  steps_count_ = spin(QStringLiteral("probeSteps"), 1, 1'000'000, box);
  steps_count_->setToolTip(tr("Training steps; the first is a warm-up, left out of the median step time"));
  learning_rate_ = new QDoubleSpinBox(box);
  learning_rate_->setObjectName(QStringLiteral("probeLearningRate"));
  learning_rate_->setDecimals(6);
  learning_rate_->setRange(0, 10);
  learning_rate_->setSingleStep(1e-4);
  learning_rate_->setToolTip(tr("AdamW's learning rate, reached after the warm-up"));
  lr_warmup_ = spin(QStringLiteral("probeLrWarmup"), 0, 1'000'000, box);
  lr_warmup_->setToolTip(tr("Steps over which the learning rate rises linearly to its value (0: none)"));
  data_ = combo(QStringLiteral("probeData"), {QStringLiteral("synthetic"), QStringLiteral("corpus")}, box);
  data_->setToolTip(tr("synthetic: random tokens (the loss stays near ln(vocabulary)); corpus: the embedded English "
                       "text, whose loss falls as the model learns"));
  device_ = combo(QStringLiteral("probeDevice"), {QStringLiteral("cpu"), QStringLiteral("cuda"), QStringLiteral("auto")}, box);
  device_->setToolTip(tr("auto: a GPU when plansight-probe was built with CUDA and one is present, else the CPU"));
  precision_ = combo(QStringLiteral("probePrecision"),
                     {QStringLiteral("fp32"), QStringLiteral("tf32"), QStringLiteral("bf16"), QStringLiteral("fp16")}, box);
  precision_->setToolTip(tr("GEMM precision. tf32, bf16 and fp16 run on a GPU's tensor cores; bf16 and fp16 keep fp32 "
                            "master weights and gradients. The CPU computes in fp32 only."));
  calibration_ = new QComboBox(box);
  calibration_->setObjectName(QStringLiteral("probeCalibration"));
  calibration_->addItem(tr("quick (about a second)"), static_cast<int>(ProbeSettings::Calibration::quick));
  calibration_->addItem(tr("full sweep"), static_cast<int>(ProbeSettings::Calibration::full));
  calibration_->addItem(tr("off"), static_cast<int>(ProbeSettings::Calibration::off));
  calibration_->setToolTip(tr("Measures this machine (GEMMs, memory bandwidth, collectives) so that the Compare page "
                              "predicts the run with this machine's numbers; without it, Compare uses the newest "
                              "profile of the device, if any"));
  launcher_ = new QLineEdit(box);
  launcher_->setObjectName(QStringLiteral("probeLauncher"));
  launcher_->setPlaceholderText(tr("none: rank threads in one process"));
  launcher_->setToolTip(tr("A launcher that starts one probe process per rank, e.g. mpirun -np 4 (TP x PP x DP "
                           "processes; add --host a,b for two nodes) or srun -n 4 inside a Slurm allocation"));
  name_ = new QLineEdit(box);
  name_->setObjectName(QStringLiteral("probeName"));
  name_->setPlaceholderText(tr("default: probe MODEL tpN ppN dpN SCHEDULE"));
  form->addRow(tr("Model"), model_);
  form->addRow(tr("TP"), tp_);
  form->addRow(tr("PP"), pp_);
  form->addRow(tr("Virtual stages"), vpp_);
  form->addRow(tr("DP"), dp_);
  form->addRow(tr("ZeRO stage"), zero_);
  form->addRow(tr("Recomputation"), recompute_);
  form->addRow(tr("Schedule"), schedule_);
  form->addRow(tr("Steps"), steps_count_);
  form->addRow(tr("Learning rate"), learning_rate_);
  form->addRow(tr("LR warm-up steps"), lr_warmup_);
  form->addRow(tr("Data"), data_);
  form->addRow(tr("Device"), device_);
  form->addRow(tr("Precision"), precision_);
  form->addRow(tr("Calibration"), calibration_);
  form->addRow(tr("Launcher"), launcher_);
  form->addRow(tr("Name"), name_);

  start_ = new QPushButton(tr("&Start"), box);
  start_->setObjectName(QStringLiteral("startProbe"));
  cancel_ = new QPushButton(tr("Cancel"), box);
  cancel_->setObjectName(QStringLiteral("cancelProbe"));
  compare_ = new QPushButton(tr("Compare with prediction"), box);
  compare_->setObjectName(QStringLiteral("compareProbe"));
  compare_->setToolTip(tr("Open the Compare page on this run"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(cancel_);
  form->addRow(buttons);
  form->addRow(compare_);
  connect(start_, &QPushButton::clicked, this, &ProbePage::startRun);
  connect(cancel_, &QPushButton::clicked, this, &ProbePage::cancelRun);
  connect(compare_, &QPushButton::clicked, this, [this] {
    if (runner_->outcome().run_id > 0) emit compareRequested(runner_->outcome().run_id);
  });
  setSettings(ProbeSettings{});
  box->setMaximumWidth(box->sizeHint().width() + 40);
  return box;
}

ProbeSettings ProbePage::settings() const {
  ProbeSettings s;
  s.model = model_->currentText();
  s.tp = tp_->value();
  s.pp = pp_->value();
  s.vpp = vpp_->value();
  s.dp = dp_->value();
  s.zero_stage = zero_->currentIndex();
  s.recompute = recompute_->currentText();
  s.schedule = schedule_->currentText();
  s.steps = steps_count_->value();
  s.learning_rate = learning_rate_->value();
  s.lr_warmup_steps = lr_warmup_->value();
  s.data = data_->currentText();
  s.device = device_->currentText();
  s.precision = precision_->currentText();
  s.calibration = static_cast<ProbeSettings::Calibration>(calibration_->currentData().toInt());
  s.name = name_->text();
  s.launcher = launcher_->text();
  return s;
}

void ProbePage::setSettings(const ProbeSettings& s) {
  model_->setCurrentText(s.model);
  tp_->setValue(s.tp);
  pp_->setValue(s.pp);
  vpp_->setValue(s.vpp);
  dp_->setValue(s.dp);
  zero_->setCurrentIndex(s.zero_stage);
  recompute_->setCurrentText(s.recompute);
  schedule_->setCurrentText(s.schedule);
  steps_count_->setValue(s.steps);
  learning_rate_->setValue(s.learning_rate);
  lr_warmup_->setValue(s.lr_warmup_steps);
  data_->setCurrentText(s.data);
  device_->setCurrentText(s.device);
  precision_->setCurrentText(s.precision);
  calibration_->setCurrentIndex(calibration_->findData(static_cast<int>(s.calibration)));
  name_->setText(s.name);
  launcher_->setText(s.launcher);
}

void ProbePage::startRun() {
  const ProbeSettings s = settings();
  runner_->setDatabasePath(runs_->databasePath());
  if (!runner_->start(s)) return;
  steps_->setSteps({});
  curves_->setResult({});
  memory_->setMemory({});
  view_->setTimeline(nullptr, {});
  summary_->clear();
  bar_->setRange(0, s.steps);
  bar_->setValue(0);
  progress_->setText(tr("Starting plansight-probe…"));
  setMessage(tr("Running %1 for %n step(s) with TP %2, PP %3, DP %4 on %5.", "", s.steps)
                 .arg(s.model).arg(s.tp).arg(s.pp).arg(s.dp).arg(s.device),
             false);
}

void ProbePage::cancelRun() { runner_->cancel(); }

QString ProbePage::message() const { return message_->text(); }
QString ProbePage::progressText() const { return progress_->text(); }

void ProbePage::setMessage(const QString& text, bool error) {
  message_->setText(text);
  QPalette p = message_->palette();
  p.setColor(QPalette::WindowText, error ? alert_colour(palette()) : palette().color(QPalette::WindowText));
  message_->setPalette(p);
}

void ProbePage::onStateChanged() {
  const auto state = runner_->state();
  const bool running = runner_->isRunning();
  for (QWidget* w : std::initializer_list<QWidget*>{model_, tp_, pp_, vpp_, dp_, zero_, recompute_, schedule_, steps_count_,
                                                    device_, precision_, calibration_, launcher_, name_, start_}) {
    w->setEnabled(!running);
  }
  cancel_->setEnabled(running);
  cancel_->setText(state == ProbeRunner::State::cancelling ? tr("Kill") : tr("Cancel"));
  cancel_->setToolTip(state == ProbeRunner::State::cancelling
                          ? tr("The probe stops after its current step; Kill ends it now, without a result")
                          : tr("Stop after the current step and keep what was measured"));
  compare_->setEnabled(!running && runner_->outcome().run_id > 0 && runner_->outcome().summary &&
                       runner_->outcome().summary->step_time_s);
  bar_->setVisible(running);
  if (state == ProbeRunner::State::calibrating) {
    bar_->setRange(0, 0);
    progress_->setText(tr("Calibrating (GEMMs, memory bandwidth, collectives)…"));
  } else if (state == ProbeRunner::State::cancelling) {
    progress_->setText(tr("Stopping after the current step…"));
  }
}

void ProbePage::onProgress(qint64 step, qint64 steps, double loss, double elapsed_s, double eta_s) {
  // The live curves: the step time is the time between two progress events (the finished run
  // replaces it by each step's measured time).
  estimator::SweepResult curves = curves_->result();
  if (curves.metrics.empty() || step <= 1) {
    curves = {{"step", "step"}, {"loss", "step time (ms)"}, {}};
    last_elapsed_s_ = 0;
  }
  estimator::SweepPoint point{static_cast<double>(step), {loss, (elapsed_s - last_elapsed_s_) * 1e3}, ""};
  if (!std::isfinite(loss)) point = {static_cast<double>(step), {}, "the loss diverged"};
  curves.points.push_back(std::move(point));
  last_elapsed_s_ = elapsed_s;
  curves_->setResult(curves);
  bar_->setRange(0, static_cast<int>(steps));
  bar_->setValue(static_cast<int>(step));
  QString text = tr("Step %1 of %2").arg(step).arg(steps);
  if (std::isfinite(loss)) text += tr(" · loss %1").arg(format_fixed(loss, 4));
  text += tr(" · %1 elapsed, about %2 left").arg(format_seconds(elapsed_s), format_seconds(eta_s));
  if (runner_->state() != ProbeRunner::State::cancelling) progress_->setText(text);
}

void ProbePage::onFinished() {
  const ProbeOutcome& o = runner_->outcome();
  const bool failed = o.kind == ProbeOutcome::Kind::failed;
  setMessage(o.message, failed);
  progress_->setText(o.kind == ProbeOutcome::Kind::complete  ? tr("Finished")
                     : o.kind == ProbeOutcome::Kind::stopped ? tr("Stopped: partial result")
                                                             : tr("No result"));
  steps_->setSteps(o.steps);
  estimator::SweepResult curves{{"step", "step"}, {"loss", "step time (ms)"}, {}};
  for (const ProbeStep& st : o.steps) {
    if (std::isfinite(st.loss)) curves.points.push_back({static_cast<double>(st.step), {st.loss, st.seconds * 1e3}, ""});
    else curves.points.push_back({static_cast<double>(st.step), {}, "the loss diverged"});
  }
  curves_->setResult(curves);
  memory_->setMemory(o.summary ? o.summary->memory_bytes : std::map<std::string, std::int64_t>{});
  view_->setTimeline(o.timeline, {});
  if (o.timeline) view_->fitAll();
  QString summary;
  if (o.summary) {
    const auto& s = *o.summary;
    summary = tr("<b>Run %1</b> on %2 · %3 of %4 steps").arg(o.run_id).arg(o.device.toHtmlEscaped()).arg(o.steps.size()).arg(o.steps_requested);
    if (s.step_time_s) summary += tr(" · median step <b>%1</b>").arg(format_seconds(*s.step_time_s));
    if (auto it = s.metrics.find("tokens_per_s"); it != s.metrics.end()) {
      summary += tr(" · %1 tokens/s").arg(format_count(it->second));
    }
    if (!s.loss_per_step.empty() && std::isfinite(s.loss_per_step.front()) && std::isfinite(s.loss_per_step.back())) {
      summary += tr(" · loss %1 → %2").arg(format_fixed(s.loss_per_step.front(), 4), format_fixed(s.loss_per_step.back(), 4));
    }
    summary += tensor_core_summary(s.device);
  }
  summary_->setText(summary);
  summary_->setToolTip(o.summary ? tensor_core_phases(o.summary->device) : QString());
  onStateChanged();
  if (o.run_id > 0) emit runStored(o.run_id);
  emit statusMessage(o.message);
}

}  // namespace plansight::gui
