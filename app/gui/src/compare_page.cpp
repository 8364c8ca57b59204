// Compare page (see compare_page.h). The comparison (estimate, predicted schedule, both phase
// splits, indexing) runs on a worker with its own Store connection; a newer pick, mode or plan
// drops the result of an older one.
#include "plansight/gui/compare_page.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <optional>

#include "plansight/gui/comparison_model.h"
#include "plansight/gui/figure_model.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/shared_time_axis.h"
#include "plansight/gui/theme.h"
#include "plansight/gui/timeline_widget.h"
#include "page_widgets.h"

namespace plansight::gui {

namespace {

constexpr int kProbeRunRole = Qt::UserRole + 1;  // the picker's runs: comparable with their own configuration

// A table no higher than its rows, so that a short one leaves the height to the others.
void fit_rows(QTableView* table) {
  int height = table->horizontalHeader()->height() + 2 * table->frameWidth();
  for (int r = 0; r < table->model()->rowCount(); ++r) height += table->rowHeight(r);
  table->setMaximumHeight(height);
}

// A table at least as high as its rows: the phases are what a comparison is read for first, so
// the other tables and the notes give up height before they do.
void show_every_row(QTableView* table) {
  const int rows = table->model()->rowCount();
  int height = table->horizontalHeader()->sizeHint().height() + 2 * table->frameWidth() + 2;
  for (int r = 0; r < rows; ++r) height += std::max(table->rowHeight(r), table->verticalHeader()->defaultSectionSize());
  table->setMinimumHeight(height);
}

// The legend under the tables, scrolled within a few lines' height: in full it is longer than
// the tables it explains (a virtual-rank GPU run's note is 14 lines at the page's width).
QWidget* scrolled_note(QLabel* note, QWidget* parent) {
  auto* area = new QScrollArea(parent);
  area->setWidget(note);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  area->setMaximumHeight(6 * note->fontMetrics().lineSpacing());
  return area;
}

// `table` with `note` under it (what its numbers are measured against).
QWidget* with_note(QWidget* table, QLabel* note, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table, 1);
  layout->addWidget(note);
  return box;
}

}  // namespace

namespace {
QString per_layer_tip() {
  return ComparePage::tr("The predicted timeline layer by layer: attention and MLP blocks and each collective as its "
                         "own span, as the measured timeline shows kernels; the op windows and totals are the "
                         "prediction's.");
}
}  // namespace

ComparePage::ComparePage(RunRepository* runs, PlanDocument* document, QWidget* parent)
    : QWidget(parent), runs_(runs), document_(document), stack_(new QStackedWidget(this)), axis_(new SharedTimeAxis(this)),
      phases_(new ComparisonModel(ComparisonModel::Unit::seconds, this)),
      memory_(new ComparisonModel(ComparisonModel::Unit::bytes, this)),
      operators_(new ComparisonModel(ComparisonModel::Unit::seconds, this)),
      throughput_(new FigureModel(tr("Throughput"), tr("tokens/s: predicted / measured - 1; MFU: predicted - measured, "
                                                       "in percentage points"), this)),
      tensor_cores_(new FigureModel(tr("Tensor cores"), tr("predicted share - measured share, in percentage points"), this)),
      jobs_(this) {
  empty_ = new QLabel(this);
  empty_->setObjectName(QStringLiteral("noProbeRuns"));
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  empty_->setText(tr("<p>No measured run in the store yet.</p><p>Measure one on this machine on the Probe page, or "
                     "with</p><pre>plansight probe --model small --steps 10</pre><p>or import a trace of a real job on "
                     "the Runs page, then press Refresh: the page sets what was measured beside what the estimator "
                     "predicts, for the run's own configuration or for the current plan.</p>"));

  picker_ = new QComboBox(this);
  picker_->setObjectName(QStringLiteral("probeRun"));
  picker_->setMinimumContentsLength(40);
  against_ = new QComboBox(this);
  against_->setObjectName(QStringLiteral("compareAgainst"));
  against_->addItem(tr("its own configuration (probe run)"), static_cast<int>(Against::own_configuration));
  against_->addItem(tr("the current plan"), static_cast<int>(Against::current_plan));
  against_->setToolTip(tr("Its own configuration: the probe run's model and layout on this machine, predicted with "
                          "the run's calibration. The current plan: the plan on the Plan page, for any measured or "
                          "imported run."));
  auto* refresh = new QPushButton(tr("Refresh"), this);
  per_layer_ = new QPushButton(tr("Per layer"), this);
  per_layer_->setObjectName(QStringLiteral("comparePerLayer"));
  per_layer_->setCheckable(true);
  per_layer_->setToolTip(per_layer_tip());
  connect(per_layer_, &QPushButton::toggled, this, [this] { showPredicted(); });
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("compareTitle"));
  title_->setWordWrap(true);
  note_ = new QLabel(this);
  note_->setObjectName(QStringLiteral("compareNote"));
  note_->setWordWrap(true);
  device_ = new QLabel(this);
  device_->setObjectName(QStringLiteral("compareDevice"));
  device_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  throughput_note_ = new QLabel(this);
  throughput_note_->setObjectName(QStringLiteral("throughputNote"));
  throughput_note_->setWordWrap(true);
  tensor_core_note_ = new QLabel(this);
  tensor_core_note_->setObjectName(QStringLiteral("tensorCoreNote"));
  tensor_core_note_->setWordWrap(true);
  warning_ = new QLabel(this);
  warning_->setObjectName(QStringLiteral("compareWarning"));
  warning_->setWordWrap(true);
  warning_->setVisible(false);
  predicted_view_ = new TimelineWidget(this);
  predicted_view_->setObjectName(QStringLiteral("predictedTimeline"));
  measured_view_ = new TimelineWidget(this);
  measured_view_->setObjectName(QStringLiteral("measuredTimeline"));
  axis_->attach(predicted_view_);
  axis_->attach(measured_view_);

  auto* content = new QWidget(this);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Run:"), this));
  top->addWidget(picker_, 2);
  top->addWidget(new QLabel(tr("predicted for:"), this));
  top->addWidget(against_, 1);
  top->addWidget(per_layer_);
  top->addWidget(refresh);
  auto* timelines = new QSplitter(Qt::Vertical, content);
  timelines->addWidget(titled_widget(tr("Predicted"), predicted_view_, timelines));
  timelines->addWidget(stepped_timeline(tr("Measured"), measured_view_, QStringLiteral("measuredStepThrough"), timelines));
  auto* tables = new QWidget(content);
  auto* tl = new QVBoxLayout(tables);
  tl->setContentsMargins(0, 0, 0, 0);
  phase_table_ = make_result_table(phases_, QStringLiteral("phaseTable"), tables);
  tl->addWidget(titled_widget(tr("Time per phase"), phase_table_, tables), 3);
  auto* memory_table = make_result_table(memory_, QStringLiteral("memoryTable"), tables);
  memory_table->setColumnHidden(ComparisonModel::kOfStep, true);  // memory has no step to be a share of
  memory_box_ = titled_widget(tr("Memory per category"), memory_table, tables);
  tl->addWidget(memory_box_, 2);
  operators_->setNameHeader(tr("Operator"));
  operators_note_ = new QLabel(this);
  operators_note_->setObjectName(QStringLiteral("operatorNote"));
  operators_note_->setWordWrap(true);
  auto* operator_table = make_result_table(operators_, QStringLiteral("operatorTable"), tables);
  operator_table->setColumnHidden(ComparisonModel::kOfStep, true);  // processor time over ranks: no step share
  operators_box_ = titled_widget(tr("Time per operator"), with_note(operator_table, operators_note_, tables), tables);
  tl->addWidget(operators_box_, 3);
  throughput_table_ = make_result_table(throughput_, QStringLiteral("throughputTable"), tables);
  throughput_box_ = titled_widget(tr("Throughput"), with_note(throughput_table_, throughput_note_, tables), tables);
  tl->addWidget(throughput_box_);  // two rows: as high as they are, the spare height to the others
  tensor_core_box_ = titled_widget(tr("Tensor-core share of kernel time"),
                                   with_note(make_result_table(tensor_cores_, QStringLiteral("tensorCoreTable"), tables),
                                             tensor_core_note_, tables),
                                   tables);
  tl->addWidget(tensor_core_box_, 3);
  tl->addWidget(scrolled_note(note_, tables));
  auto* split = new QSplitter(Qt::Horizontal, content);
  split->addWidget(timelines);
  split->addWidget(tables);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  tables->setMinimumWidth(480);  // five columns readable without scrolling
  auto* cl = new QVBoxLayout(content);
  cl->setContentsMargins(0, 0, 0, 0);
  cl->addWidget(title_);
  cl->addWidget(device_);
  cl->addWidget(warning_);
  cl->addWidget(split, 1);

  stack_->addWidget(empty_);
  stack_->addWidget(content);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);  // above the stack: Refresh is there when the store has no run to compare
  layout->addWidget(stack_, 1);

  connect(refresh, &QPushButton::clicked, runs_, &RunRepository::refresh);
  connect(runs_, &RunRepository::runsChanged, this, &ComparePage::runsChanged);
  connect(picker_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i < 0) return;
    updateAgainstChoices();
    compareCurrent();
  });
  connect(against_, &QComboBox::activated, this, [this] { compareCurrent(); });
  connect(document_, &PlanDocument::estimateReady, this, &ComparePage::planChanged);
  runsChanged();
}

ComparePage::~ComparePage() = default;

bool ComparePage::showsEmptyHint() const { return stack_->currentWidget() == empty_; }
QString ComparePage::titleText() const { return title_->text(); }

ComparePage::Against ComparePage::against() const { return static_cast<Against>(against_->currentData().toInt()); }

void ComparePage::setAgainst(Against against) {
  const int index = against_->findData(static_cast<int>(against));
  auto* items = qobject_cast<QStandardItemModel*>(against_->model());
  if (index < 0 || (items && !items->item(index)->isEnabled())) return;
  if (index == against_->currentIndex()) return;
  against_->setCurrentIndex(index);
  compareCurrent();
}

void ComparePage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!refreshed_) {
    refreshed_ = true;
    runs_->refresh();
  }
  if (stale_) compareCurrent();
}

void ComparePage::runsChanged() {
  const qlonglong current = picker_->currentIndex() >= 0 ? picker_->currentData().toLongLong() : -1;
  {
    const QSignalBlocker block(picker_);
    picker_->clear();
    for (const auto& entry : runs_->runs()) {
      const bool probe = is_comparable_probe_run(entry.run);
      if (!probe && !has_measured_timeline(entry.timelines)) continue;
      picker_->addItem(QStringLiteral("#%1  %2  (%3%4, %5)")
                           .arg(entry.run.id)
                           .arg(QString::fromStdString(entry.run.name),
                                QString::fromLatin1(store::to_string(entry.run.kind).data()),
                                entry.run.device.empty() ? QString() : QStringLiteral(", ") + QString::fromStdString(entry.run.device),
                                QString::fromStdString(entry.run.created_at)),
                       static_cast<qlonglong>(entry.run.id));
      picker_->setItemData(picker_->count() - 1, probe, kProbeRunRole);
    }
  }
  stack_->setCurrentIndex(picker_->count() == 0 ? 0 : 1);
  if (picker_->count() == 0) return;
  const int keep = picker_->findData(current);
  {
    const QSignalBlocker block(picker_);
    picker_->setCurrentIndex(keep >= 0 ? keep : 0);  // newest first
  }
  updateAgainstChoices();
  if (keep < 0 || !comparison_) compareCurrent();
}

void ComparePage::updateAgainstChoices() {
  // Only a finished probe run has an own configuration to predict; everything else is set
  // beside the current plan.
  const bool probe = picker_->currentIndex() >= 0 && picker_->currentData(kProbeRunRole).toBool();
  if (auto* items = qobject_cast<QStandardItemModel*>(against_->model())) items->item(0)->setEnabled(probe);
  if (!probe) against_->setCurrentIndex(against_->findData(static_cast<int>(Against::current_plan)));
}

void ComparePage::selectRun(std::int64_t run_id, std::optional<Against> against) {
  const auto apply = [this, run_id, against] {
    const int index = picker_->findData(static_cast<qlonglong>(run_id));
    if (index < 0) return false;
    {
      const QSignalBlocker block(picker_);
      picker_->setCurrentIndex(index);
    }
    updateAgainstChoices();
    if (against) {
      const int wanted = against_->findData(static_cast<int>(*against));
      auto* items = qobject_cast<QStandardItemModel*>(against_->model());
      if (wanted >= 0 && (!items || items->item(wanted)->isEnabled())) against_->setCurrentIndex(wanted);
    }
    compareCurrent();
    return true;
  };
  if (apply()) return;
  // Not listed yet (just stored): pick it once the repository has re-read the store.
  auto* once = new QObject(this);
  connect(runs_, &RunRepository::runsChanged, once, [once, apply] {
    once->deleteLater();
    apply();
  });
  runs_->refresh();
}

void ComparePage::planChanged() {
  if (against() != Against::current_plan || picker_->currentIndex() < 0) return;
  if (isVisible()) compareCurrent();
  else stale_ = true;
}

void ComparePage::compareCurrent() {
  if (picker_->currentIndex() < 0) return;
  stale_ = false;
  const std::int64_t run_id = picker_->currentData().toLongLong();
  const QString path = runs_->databasePath();
  const bool with_plan = against() == Against::current_plan;
  const estimator::Plan plan = document_->plan();
  title_->setText(tr("Comparing run %1…").arg(run_id));
  jobs_.start([this, path, run_id, with_plan, plan](const JobRunner::Job& job) {
    auto db = path.isEmpty() ? store::Store::open_default() : store::Store::open(path.toStdString());
    auto out = std::make_shared<RunComparison>();
    if (!db) {
      out->run_id = run_id;
      out->error = QString::fromStdString(db.error_text());
    } else if (with_plan) {
      *out = compare_run_with_plan(*db, run_id, plan);
    } else {
      *out = compare_probe_run(*db, run_id);
    }
    std::shared_ptr<const RunComparison> result = std::move(out);
    job.post([this, result] { deliver(result); });  // dropped when another comparison started since
  });
}

void ComparePage::deliver(std::shared_ptr<const RunComparison> comparison) {
  comparison_ = std::move(comparison);
  const auto& c = *comparison_;
  if (!c.error.isEmpty()) {
    title_->setText(tr("Run %1 cannot be compared: %2").arg(c.run_id).arg(c.error));
    phases_->setRows({});
    memory_->setRows({});
    operators_->setRows({});
    operators_box_->setVisible(false);
    showFigures(c);
    predicted_view_->setTimeline(nullptr, {});
    measured_view_->setTimeline(nullptr, {});
    note_->clear();
    warning_->setVisible(false);
  } else {
    title_->setText(c.title);
    phases_->setRows(c.phases);
    memory_->setRows(c.memory);
    memory_box_->setVisible(!c.memory.empty());
    operators_->setRows(c.operators);
    operators_note_->setText(c.operators_note);
    operators_box_->setVisible(!c.operators.empty());
    showFigures(c);
    note_->setText(c.note);
    show_every_row(phase_table_);
    QStringList lines;
    for (const QString& w : c.warnings) lines << w.toHtmlEscaped();
    warning_->setText(QStringLiteral("<span style=\"color:%1\">%2</span>")
                          .arg(alert_colour(palette()).name(), lines.join(QStringLiteral("<br>"))));
    warning_->setVisible(!c.warnings.isEmpty());
    measured_view_->setTimeline(c.measured, {});
    showPredicted();
  }
  emit comparisonReady();
}

void ComparePage::showFigures(const RunComparison& c) {
  device_->setText(c.device.isEmpty() ? QString() : tr("Device: %1 · %2").arg(c.device, c.precision));
  device_->setVisible(!c.device.isEmpty());
  throughput_->setRows(c.throughput);
  throughput_note_->setText(c.throughput_note);
  throughput_box_->setVisible(!c.throughput.empty());
  tensor_cores_->setRows(c.tensor_cores);
  tensor_core_note_->setText(c.tensor_core_note);
  tensor_core_note_->setToolTip(c.tensor_core_tip);
  fit_rows(throughput_table_);
  tensor_core_box_->setVisible(!c.tensor_cores.empty());
}

void ComparePage::showPredicted() {
  if (!comparison_ || !comparison_->error.isEmpty()) return;
  const RunComparison& c = *comparison_;
  const bool layers = per_layer_->isChecked() && c.predicted_layers;
  per_layer_->setToolTip(per_layer_->isChecked() && !c.predicted_layers
                             ? tr("Not per layer: %1").arg(c.layers_message)
                             : per_layer_tip());
  predicted_view_->setTimeline(layers ? c.predicted_layers : c.predicted, {});
  predicted_view_->fitAll();  // both views: same extent, so one fit fits both
}

void ComparePage::setPerLayer(bool on) { per_layer_->setChecked(on); }

bool ComparePage::perLayer() const { return per_layer_->isChecked(); }

}  // namespace plansight::gui
