// Runs page (see runs_page.h).
#include "plansight/gui/runs_page.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QShowEvent>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/estimator/json_io.h"
#include "plansight/gui/format.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/run_list_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

namespace est = plansight::estimator;

RunsPage::RunsPage(PlanDocument* document, RunRepository* repository, QWidget* parent)
    : QWidget(parent),
      document_(document),
      repository_(repository),
      model_(new RunListModel(this)),
      table_(new QTableView(this)),
      location_(new QLabel(this)),
      details_(new QLabel(this)),
      source_(new QComboBox(this)),
      view_(new TimelineWidget(this)) {
  table_->setObjectName(QStringLiteral("runsTable"));
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(RunListModel::NameColumn, QHeaderView::Stretch);
  details_->setObjectName(QStringLiteral("runDetails"));
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  source_->setObjectName(QStringLiteral("runTimelineSource"));
  source_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  view_->setObjectName(QStringLiteral("runTimeline"));
  location_->setObjectName(QStringLiteral("runStoreLocation"));
  location_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* refresh = new QPushButton(tr("Refresh"), this);
  auto* save = new QPushButton(tr("Keep current plan as a run"), this);
  auto* open = new QPushButton(tr("Open run's plan"), this);
  save->setObjectName(QStringLiteral("savePlanAsRun"));
  open->setObjectName(QStringLiteral("openRunPlan"));
  connect(refresh, &QPushButton::clicked, repository_, &RunRepository::refresh);
  connect(save, &QPushButton::clicked, this, &RunsPage::savePlan);
  connect(open, &QPushButton::clicked, this, &RunsPage::openPlan);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(location_, 1);
  buttons->addWidget(refresh);
  buttons->addWidget(save);
  buttons->addWidget(open);

  auto* lower = new QWidget(this);
  auto* lower_layout = new QVBoxLayout(lower);
  lower_layout->setContentsMargins(0, 0, 0, 0);
  auto* source_row = new QHBoxLayout;
  source_row->addWidget(details_, 1);
  source_row->addWidget(new QLabel(tr("Timeline:"), this));
  source_row->addWidget(source_);
  lower_layout->addLayout(source_row);
  lower_layout->addWidget(view_, 1);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(table_);
  splitter->addWidget(lower);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(splitter, 1);

  connect(repository_, &RunRepository::runsChanged, this, &RunsPage::onRunsChanged);
  connect(repository_, &RunRepository::timelineLoaded, this, &RunsPage::onTimelineLoaded);
  connect(repository_, &RunRepository::failed, this, &RunsPage::statusMessage);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPage::onSelection);
  connect(source_, &QComboBox::activated, this, [this] { onSelection(); });
}

void RunsPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!loaded_) {
    loaded_ = true;
    repository_->refresh();
  }
}

void RunsPage::selectRun(int row) { table_->selectRow(row); }

void RunsPage::onRunsChanged() {
  const QModelIndex current = table_->currentIndex();
  const std::int64_t selected = current.isValid() ? current.data(RunListModel::RunIdRole).toLongLong() : -1;
  model_->setRuns(repository_->runs());
  location_->setText(tr("%n run(s) in %1", "", model_->rowCount()).arg(repository_->location()));
  const int row = model_->rowOf(selected);
  if (row >= 0) table_->selectRow(row);
}

void RunsPage::onSelection() {
  const RunEntry* e = model_->entry(table_->currentIndex().row());
  if (!e) {
    details_->clear();
    view_->setTimeline(nullptr, {});
    return;
  }
  const auto& r = e->run;
  QString text = QStringLiteral("<b>%1</b> — run %2, %3, %4")
                     .arg(QString::fromStdString(r.name).toHtmlEscaped())
                     .arg(r.id)
                     .arg(QString::fromLatin1(store::to_string(r.kind).data()),
                          QString::fromLatin1(store::to_string(r.status).data()));
  if (!r.device.empty()) text += QStringLiteral(" on %1").arg(QString::fromStdString(r.device).toHtmlEscaped());
  if (r.summary) {
    if (r.summary->step_time_s) text += QStringLiteral("<br>step time %1").arg(format_seconds(*r.summary->step_time_s));
    for (const auto& [name, value] : r.summary->metrics) {
      text += QStringLiteral(" · %1 %2").arg(QString::fromStdString(name).toHtmlEscaped(), format_fixed(value, 4));
    }
  }
  if (!r.notes.empty()) text += QStringLiteral("<br>") + QString::fromStdString(r.notes).toHtmlEscaped();
  details_->setText(text);

  // Timelines of this run; keep the chosen source when the run has it.
  const QString wanted = source_->currentText();
  source_->blockSignals(true);
  source_->clear();
  for (const auto& t : e->timelines) {
    source_->addItem(QString::fromLatin1(est::to_string(t.source).data()), static_cast<int>(t.source));
  }
  if (source_->findText(wanted) >= 0) source_->setCurrentIndex(source_->findText(wanted));
  source_->blockSignals(false);
  if (source_->count() == 0) {
    view_->setTimeline(nullptr, {});
    return;
  }
  repository_->loadTimeline(r.id, static_cast<est::TimelineSource>(source_->currentData().toInt()));
}

void RunsPage::onTimelineLoaded() {
  const LoadedTimeline& t = repository_->timeline();
  const RunEntry* e = model_->entry(table_->currentIndex().row());
  if (!e || e->run.id != t.run_id) return;  // the selection moved on
  if (!t.index) {
    emit statusMessage(tr("Cannot load the timeline of run %1: %2").arg(t.run_id).arg(t.error));
    view_->setTimeline(nullptr, {});
    return;
  }
  view_->setTimeline(t.index, {});
  view_->fitAll();
}

void RunsPage::openPlan() {
  const RunEntry* e = model_->entry(table_->currentIndex().row());
  if (!e || !e->run.plan) {
    emit statusMessage(tr("The selected run has no plan."));
    return;
  }
  auto plan = est::plan_from_json(*e->run.plan);
  if (!plan) {
    emit statusMessage(
        tr("Run %1's plan cannot be read: %2").arg(e->run.id).arg(QString::fromStdString(plan.error_text())));
    return;
  }
  document_->replacePlan(*plan);
  emit planOpened();
}

void RunsPage::savePlan() {
  const est::Plan& p = document_->plan();
  const QString name = QStringLiteral("%1 · TP%2 PP%3 · %4 GPUs")
                           .arg(QString::fromStdString(p.model.name))
                           .arg(p.layout.tp)
                           .arg(p.layout.pp)
                           .arg(p.cluster.gpus);
  repository_->savePlan(p, name);
  emit statusMessage(tr("Kept the plan as run \"%1\"").arg(name));
}

}  // namespace plansight::gui
