// Compare page (see compare_page.h). The comparison (estimate, predicted schedule, both phase
// splits, indexing) runs on a worker with its own Store connection; a newer pick drops the
// result of an older one.
#include "plansight/gui/compare_page.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/gui/comparison_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/shared_time_axis.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

namespace {

QTableView* make_table(ComparisonModel* model, const QString& name, QWidget* parent) {
  auto* t = new QTableView(parent);
  t->setObjectName(name);
  t->setModel(model);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  t->setSelectionMode(QAbstractItemView::NoSelection);
  return t;
}

QWidget* titled(const QString& title, QWidget* w, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* l = new QVBoxLayout(box);
  l->setContentsMargins(0, 0, 0, 0);
  auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title), box);
  l->addWidget(label);
  l->addWidget(w, 1);
  return box;
}

}  // namespace

ComparePage::ComparePage(RunRepository* runs, QWidget* parent)
    : QWidget(parent), runs_(runs), stack_(new QStackedWidget(this)), axis_(new SharedTimeAxis(this)),
      phases_(new ComparisonModel(ComparisonModel::Unit::seconds, this)),
      memory_(new ComparisonModel(ComparisonModel::Unit::bytes, this)) {
  pool_.setMaxThreadCount(1);
  empty_ = new QLabel(this);
  empty_->setObjectName(QStringLiteral("noProbeRuns"));
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  empty_->setText(tr("<p>No probe run in the store yet.</p><p>Measure one on this machine with</p>"
                     "<pre>plansight probe --model small --steps 10</pre>"
                     "<p>then press Refresh: the page compares what the estimator predicts for that exact "
                     "configuration with what the probe measured.</p>"));

  picker_ = new QComboBox(this);
  picker_->setObjectName(QStringLiteral("probeRun"));
  picker_->setMinimumContentsLength(40);
  auto* refresh = new QPushButton(tr("Refresh"), this);
  title_ = new QLabel(this);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  predicted_view_ = new TimelineWidget(this);
  predicted_view_->setObjectName(QStringLiteral("predictedTimeline"));
  measured_view_ = new TimelineWidget(this);
  measured_view_->setObjectName(QStringLiteral("measuredTimeline"));
  axis_->attach(predicted_view_);
  axis_->attach(measured_view_);

  auto* content = new QWidget(this);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Probe run:"), this));
  top->addWidget(picker_, 1);
  top->addWidget(refresh);
  auto* timelines = new QSplitter(Qt::Vertical, content);
  timelines->addWidget(titled(tr("Predicted"), predicted_view_, timelines));
  timelines->addWidget(titled(tr("Measured"), measured_view_, timelines));
  auto* tables = new QWidget(content);
  auto* tl = new QVBoxLayout(tables);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(titled(tr("Time per phase"), make_table(phases_, QStringLiteral("phaseTable"), tables), tables), 3);
  tl->addWidget(titled(tr("Memory per category"), make_table(memory_, QStringLiteral("memoryTable"), tables), tables), 2);
  tl->addWidget(note_);
  auto* split = new QSplitter(Qt::Horizontal, content);
  split->addWidget(timelines);
  split->addWidget(tables);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  tables->setMinimumWidth(420);  // four columns readable without scrolling
  auto* cl = new QVBoxLayout(content);
  cl->setContentsMargins(0, 0, 0, 0);
  cl->addWidget(title_);
  cl->addWidget(split, 1);

  stack_->addWidget(empty_);
  stack_->addWidget(content);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);  // above the stack: Refresh is there when the store has no probe run
  layout->addWidget(stack_, 1);

  connect(refresh, &QPushButton::clicked, runs_, &RunRepository::refresh);
  connect(runs_, &RunRepository::runsChanged, this, &ComparePage::runsChanged);
  connect(picker_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i >= 0) compareRun(picker_->itemData(i).toLongLong());
  });
  runsChanged();
}

ComparePage::~ComparePage() {
  ++generation_;
  pool_.waitForDone();  // the worker posts to `this`; let it finish before it goes
}

bool ComparePage::showsEmptyHint() const { return stack_->currentWidget() == empty_; }

void ComparePage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!refreshed_) {
    refreshed_ = true;
    runs_->refresh();
  }
}

void ComparePage::runsChanged() {
  const qlonglong current = picker_->currentIndex() >= 0 ? picker_->currentData().toLongLong() : -1;
  const QSignalBlocker block(picker_);
  picker_->clear();
  for (const auto& entry : runs_->runs()) {
    if (!is_comparable_probe_run(entry.run)) continue;
    picker_->addItem(QStringLiteral("#%1  %2  (%3, %4)")
                         .arg(entry.run.id)
                         .arg(QString::fromStdString(entry.run.name), QString::fromStdString(entry.run.device),
                              QString::fromStdString(entry.run.created_at)),
                     static_cast<qlonglong>(entry.run.id));
  }
  stack_->setCurrentIndex(picker_->count() == 0 ? 0 : 1);
  if (picker_->count() == 0) return;
  const int keep = picker_->findData(current);
  picker_->setCurrentIndex(keep >= 0 ? keep : 0);  // newest first
  if (keep < 0 || !comparison_) compareRun(picker_->currentData().toLongLong());
}

void ComparePage::compareRun(std::int64_t run_id) {
  const std::uint64_t generation = ++generation_;
  const QString path = runs_->location();
  title_->setText(tr("Comparing run %1…").arg(run_id));
  QPointer<ComparePage> self(this);
  pool_.start([self, generation, path, run_id] {
    auto db = path.isEmpty() ? store::Store::open_default() : store::Store::open(path.toStdString());
    auto out = std::make_shared<ProbeComparison>();
    if (db) {
      *out = compare_probe_run(*db, run_id);
    } else {
      out->run_id = run_id;
      out->error = QString::fromStdString(db.error_text());
    }
    std::shared_ptr<const ProbeComparison> result = std::move(out);
    // The destructor waits for this job, so `self` is alive while posting.
    QMetaObject::invokeMethod(
        self.data(), [self, generation, result] { if (self) self->deliver(generation, result); }, Qt::QueuedConnection);
  });
}

void ComparePage::deliver(std::uint64_t generation, std::shared_ptr<const ProbeComparison> comparison) {
  if (generation != generation_) return;
  comparison_ = std::move(comparison);
  const auto& c = *comparison_;
  if (!c.error.isEmpty()) {
    title_->setText(tr("Run %1 cannot be compared: %2").arg(c.run_id).arg(c.error));
    phases_->setRows({});
    memory_->setRows({});
    predicted_view_->setTimeline(nullptr, {});
    measured_view_->setTimeline(nullptr, {});
    note_->clear();
  } else {
    title_->setText(c.title);
    phases_->setRows(c.phases);
    memory_->setRows(c.memory);
    note_->setText(c.note);
    predicted_view_->setTimeline(c.predicted, {});
    measured_view_->setTimeline(c.measured, {});
    predicted_view_->fitAll();  // both views: same extent, so one fit fits both
  }
  emit comparisonReady();
}

}  // namespace plansight::gui
