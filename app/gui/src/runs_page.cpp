// Runs page layout, selection and timeline (see runs_page.h); rename, delete, compare, import
// and the plan buttons are in runs_page_actions.cpp.
#include "plansight/gui/runs_page.h"

#include "page_widgets.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QShowEvent>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/estimator/json_io.h"
#include "plansight/gui/format.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/run_diff_model.h"
#include "plansight/gui/run_list_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/theme.h"
#include "plansight/gui/timeline_widget.h"
#include "plansight/store/metric_words.h"

namespace plansight::gui {

namespace est = plansight::estimator;

RunsPage::RunsPage(PlanDocument* document, RunRepository* repository, QWidget* parent)
    : QWidget(parent),
      document_(document),
      repository_(repository),
      model_(new RunListModel(this)),
      diff_model_(new RunDiffModel(this)),
      table_(new QTableView(this)),
      location_(new QLabel(this)),
      message_(new QLabel(this)),
      details_(new QLabel(this)),
      source_(new QComboBox(this)),
      view_(new TimelineWidget(this)),
      tabs_(new QTabWidget(this)),
      diff_title_(new QLabel(this)) {
  table_->setObjectName(QStringLiteral("runsTable"));
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);  // two runs to compare
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(RunListModel::NameColumn, QHeaderView::Stretch);
  location_->setObjectName(QStringLiteral("runStoreLocation"));
  location_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setObjectName(QStringLiteral("runsMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();

  auto* refresh = new QPushButton(tr("Refresh"), this);
  auto* import = new QPushButton(tr("Import trace"), this);
  import->setObjectName(QStringLiteral("importTrace"));
  auto* import_menu = new QMenu(import);
  import_menu->addAction(tr("Trace file (Kineto JSON, .json.gz, nsys SQLite)…"), this, &RunsPage::importTraceFile);
  import_menu->addAction(tr("Folder of per-rank Kineto files…"), this, &RunsPage::importTraceFolder);
  import->setMenu(import_menu);
  rename_ = new QPushButton(tr("Rename…"), this);
  rename_->setObjectName(QStringLiteral("renameRun"));
  delete_ = new QPushButton(tr("Delete…"), this);
  delete_->setObjectName(QStringLiteral("deleteRun"));
  compare_ = new QPushButton(tr("Compare two"), this);
  compare_->setObjectName(QStringLiteral("compareRuns"));
  compare_->setToolTip(tr("Select two runs (Ctrl+click): where the time moved from the first to the second"));
  auto* save = new QPushButton(tr("Keep current plan as a run"), this);
  save->setObjectName(QStringLiteral("savePlanAsRun"));
  open_ = new QPushButton(tr("Open run's plan"), this);
  open_->setObjectName(QStringLiteral("openRunPlan"));
  connect(refresh, &QPushButton::clicked, repository_, &RunRepository::refresh);
  connect(rename_, &QPushButton::clicked, this, &RunsPage::renameSelected);
  connect(delete_, &QPushButton::clicked, this, &RunsPage::deleteSelected);
  connect(compare_, &QPushButton::clicked, this, &RunsPage::compareSelected);
  connect(save, &QPushButton::clicked, this, &RunsPage::savePlan);
  connect(open_, &QPushButton::clicked, this, &RunsPage::openPlan);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(location_, 1);
  for (QPushButton* b : {refresh, import, rename_, delete_, compare_, save, open_}) buttons->addWidget(b);

  tabs_->setObjectName(QStringLiteral("runDetailTabs"));
  tabs_->addTab(buildTimelineTab(), tr("Timeline"));
  tabs_->addTab(buildDiffTab(), tr("Difference of two runs"));
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(table_);
  splitter->addWidget(tabs_);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(message_);
  layout->addWidget(splitter, 1);

  connect(repository_, &RunRepository::runsChanged, this, &RunsPage::onRunsChanged);
  connect(repository_, &RunRepository::timelineLoaded, this, &RunsPage::onTimelineLoaded);
  connect(repository_, &RunRepository::diffReady, this, &RunsPage::onDiffReady);
  connect(repository_, &RunRepository::failed, this, [this](const QString& m) { setMessage(m, true); });
  connect(repository_, &RunRepository::changed, this, [this](const QString& m) { setMessage(m, false); });
  connect(repository_, &RunRepository::imported, this, [this](qint64, const QString& m) { setMessage(m, false); });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPage::onSelection);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &RunsPage::onSelection);
  connect(source_, &QComboBox::activated, this, [this] { onSelection(); });
  updateButtons();
}

QWidget* RunsPage::buildTimelineTab() {
  auto* tab = new QWidget(this);
  auto* l = new QVBoxLayout(tab);
  l->setContentsMargins(0, 0, 0, 0);
  details_->setObjectName(QStringLiteral("runDetails"));
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  source_->setObjectName(QStringLiteral("runTimelineSource"));
  source_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  view_->setObjectName(QStringLiteral("runTimeline"));
  auto* row = new QHBoxLayout;
  row->addWidget(details_, 1);
  row->addWidget(new QLabel(tr("Timeline:"), tab));
  row->addWidget(source_);
  l->addLayout(row);
  // A stored run's timeline (measured, imported or predicted) steps through as the plan's does.
  l->addWidget(stepped_timeline(tr("Run timeline"), view_, QStringLiteral("runStepThrough"), tab), 1);
  return tab;
}

QWidget* RunsPage::buildDiffTab() {
  auto* tab = new QWidget(this);
  auto* l = new QVBoxLayout(tab);
  l->setContentsMargins(0, 0, 0, 0);
  diff_title_->setObjectName(QStringLiteral("runDiffTitle"));
  diff_title_->setWordWrap(true);
  diff_title_->setText(tr("Select two runs and press Compare two: device time per phase and per kernel class of "
                          "each (summed over ranks and streams), B − A and B / A."));
  auto* table = new QTableView(tab);
  table->setObjectName(QStringLiteral("runDiffTable"));
  table->setModel(diff_model_);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setStretchLastSection(true);
  table->setSelectionMode(QAbstractItemView::NoSelection);
  l->addWidget(diff_title_);
  l->addWidget(table, 1);
  return tab;
}

void RunsPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!loaded_) {
    loaded_ = true;
    repository_->refresh();
  }
}

void RunsPage::selectRun(int row) { table_->selectRow(row); }

void RunsPage::selectRuns(const QList<int>& rows) {
  auto* selection = table_->selectionModel();
  selection->clearSelection();
  for (int row : rows) {
    selection->select(model_->index(row, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
  }
  if (!rows.isEmpty()) selection->setCurrentIndex(model_->index(rows.front(), 0), QItemSelectionModel::NoUpdate);
}

QList<std::int64_t> RunsPage::selectedRunIds() const {
  QList<std::int64_t> ids;
  // Selection order, so that "the first selected" is A.
  for (const QModelIndex& i : table_->selectionModel()->selection().indexes()) {
    if (i.column() != 0) continue;
    const std::int64_t id = i.data(RunListModel::RunIdRole).toLongLong();
    if (!ids.contains(id)) ids.push_back(id);
  }
  return ids;
}

QString RunsPage::message() const { return message_->text(); }

void RunsPage::setMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setVisible(!text.isEmpty());
  QPalette p = message_->palette();
  p.setColor(QPalette::WindowText, error ? alert_colour(palette()) : palette().color(QPalette::WindowText));
  message_->setPalette(p);
  emit statusMessage(text);
}

void RunsPage::onRunsChanged() {
  const QModelIndex current = table_->currentIndex();
  const std::int64_t selected = current.isValid() ? current.data(RunListModel::RunIdRole).toLongLong() : -1;
  model_->setRuns(repository_->runs());
  location_->setText(tr("%n run(s) in %1", "", model_->rowCount()).arg(repository_->location()));
  const int row = model_->rowOf(selected);
  if (row >= 0) table_->selectRow(row);
  else onSelection();  // the run is gone (deleted): clear its details
}

void RunsPage::updateButtons() {
  const int selected = static_cast<int>(selectedRunIds().size());
  rename_->setEnabled(selected == 1);
  delete_->setEnabled(selected == 1);
  open_->setEnabled(selected == 1);
  compare_->setEnabled(selected == 2);
}

void RunsPage::onSelection() {
  updateButtons();
  const RunEntry* e = model_->entry(table_->currentIndex().row());
  if (!e || !table_->selectionModel()->isRowSelected(table_->currentIndex().row(), {})) {
    details_->clear();
    source_->clear();
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
      const auto m = store::describe_metric(name, value);
      text += QStringLiteral(" · %1: %2").arg(QString::fromStdString(m.label).toHtmlEscaped(),
                                                QString::fromStdString(m.value).toHtmlEscaped());
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
  const auto source = static_cast<est::TimelineSource>(source_->currentData().toInt());
  const LoadedTimeline& shown = repository_->timeline();
  if (view_->timeline() && shown.run_id == r.id && shown.source == source) return;  // already on screen
  repository_->loadTimeline(r.id, source);
}

void RunsPage::onTimelineLoaded() {
  const LoadedTimeline& t = repository_->timeline();
  const RunEntry* e = model_->entry(table_->currentIndex().row());
  if (!e || e->run.id != t.run_id) return;  // the selection moved on
  if (!t.index) {
    setMessage(tr("Cannot load the timeline of run %1: %2").arg(t.run_id).arg(t.error), true);
    view_->setTimeline(nullptr, {});
    return;
  }
  view_->setTimeline(t.index, {});
  view_->fitAll();
}

void RunsPage::onDiffReady() {
  const RunDiff& d = repository_->diff();
  if (!d.error.isEmpty()) {
    diff_model_->clear();
    diff_title_->setText(tr("Runs %1 and %2 cannot be compared: %3").arg(d.a).arg(d.b).arg(d.error));
    setMessage(diff_title_->text(), true);
    return;
  }
  diff_model_->setDiff(d.diff);
  diff_title_->setText(tr("<b>A</b> = %1, %n rank(s)", "", d.diff.a_ranks).arg(d.a_title.toHtmlEscaped()) + QStringLiteral("<br>") +
                       tr("<b>B</b> = %1, %n rank(s)", "", d.diff.b_ranks).arg(d.b_title.toHtmlEscaped()) + QStringLiteral("<br>") +
                       tr("Device time summed over ranks and streams (two streams busy at once count twice); step: "
                          "each timeline's extent."));
  tabs_->setCurrentIndex(1);
}

}  // namespace plansight::gui
