// The Plans page (plans_page.h).
#include "plansight/gui/plans_page.h"

#include <QFile>
#include <QFileDialog>
#include <QFont>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "page_widgets.h"
#include "plansight/estimator/json_io.h"
#include "plansight/gui/shared_time_axis.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

QString value_text(double v) { return QString::number(v, 'g', 4); }
QString json_text(const nlohmann::json& v) { return v.is_null() ? QStringLiteral("—") : QString::fromStdString(v.dump()); }

}  // namespace

void PlanDiffModel::setDiff(std::vector<est::PlanFieldChange> changes, std::vector<est::PlanQuantity> quantities) {
  beginResetModel();
  changes_ = std::move(changes);
  quantities_.clear();
  for (auto& q : quantities) {
    if (q.available) quantities_.push_back(std::move(q));
  }
  endResetModel();
}

int PlanDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(changes_.size() + quantities_.size());
}
int PlanDiffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : column_count; }

QVariant PlanDiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const auto row = static_cast<std::size_t>(index.row());
  if (row < changes_.size()) {
    const auto& c = changes_[row];
    if (role == Qt::FontRole) {
      QFont bold;
      bold.setBold(true);
      return bold;
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
      case name: return QString::fromStdString(c.path);
      case a: return json_text(c.a);
      case b: return json_text(c.b);
      default: return {};
    }
  }
  const auto& q = quantities_[row - changes_.size()];
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case a: return q.a;
      case b: return q.b;
      case delta: return q.delta();
      case ratio: return q.ratio();
      default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != name) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case name: {
      const QString unit = QString::fromStdString(q.unit);
      return QStringLiteral("%1: %2%3").arg(QString::fromStdString(q.group), QString::fromStdString(q.name),
                                            unit.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(unit));
    }
    case a: return value_text(q.a);
    case b: return value_text(q.b);
    case delta: return (q.delta() > 0 ? QStringLiteral("+") : QString()) + value_text(q.delta());
    case ratio: return std::isfinite(q.ratio()) ? QStringLiteral("%1x").arg(q.ratio(), 0, 'f', 2) : QStringLiteral("—");
    default: return {};
  }
}

QVariant PlanDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case name: return tr("Field or quantity");
    case a: return tr("A (pinned)");
    case b: return tr("B (current)");
    case delta: return tr("B − A");
    case ratio: return tr("B / A");
    default: return {};
  }
}

PlansPage::PlansPage(PlanDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), axis_(new SharedTimeAxis(this)) {
  auto* pin = new QPushButton(tr("&Pin the current plan as A"), this);
  pin->setObjectName(QStringLiteral("pinPlan"));
  auto* open = new QPushButton(tr("Pin a plan &file as A…"), this);
  open->setObjectName(QStringLiteral("pinPlanFile"));
  status_ = new QLabel(tr("Pin a plan, then edit: this page sets the pinned plan (A) beside the plan being edited (B)."), this);
  status_->setObjectName(QStringLiteral("plansStatus"));
  status_->setWordWrap(true);
  pinned_view_ = new TimelineWidget(this);
  pinned_view_->setObjectName(QStringLiteral("pinnedTimeline"));
  current_view_ = new TimelineWidget(this);
  current_view_->setObjectName(QStringLiteral("currentTimeline"));
  axis_->attach(pinned_view_);
  axis_->attach(current_view_);

  auto* bar = new QHBoxLayout;
  bar->addWidget(pin);
  bar->addWidget(open);
  bar->addStretch(1);
  auto* timelines = new QSplitter(Qt::Vertical, this);
  timelines->addWidget(titled_widget(tr("A (pinned): predicted iteration"), pinned_view_, timelines));
  timelines->addWidget(titled_widget(tr("B (current): predicted iteration, same time axis"), current_view_, timelines));
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(make_result_table(&model_, QStringLiteral("planDiffTable"), split));
  split->addWidget(timelines);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  split->setSizes({560, 720});  // the table's names and four number columns, readable
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  connect(pin, &QPushButton::clicked, this, &PlansPage::pinCurrentPlan);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Pin a plan file"), QString(), tr("Plan JSON (*.json)"));
    if (path.isEmpty()) return;
    if (const QString error = pinPlanFile(path); !error.isEmpty()) status_->setText(error);
  });
  connect(document_, &PlanDocument::estimateReady, this, &PlansPage::refresh);
  connect(document_, &PlanDocument::timelineReady, this, &PlansPage::refresh);
}

QString PlansPage::describe(const est::Plan& p) const {
  return tr("%1 on %2 GPUs, TP %3 x PP %4 x DP %5, ZeRO %6, micro-batch %7, global batch %8")
      .arg(QString::fromStdString(p.model.name))
      .arg(p.cluster.gpus)
      .arg(p.layout.tp)
      .arg(p.layout.pp)
      .arg(p.dp())
      .arg(p.layout.zero_stage)
      .arg(p.training.micro_batch)
      .arg(p.training.global_batch);
}

void PlansPage::pinCurrentPlan() {
  pinned_ = Pinned{document_->plan(), document_->estimate(), document_->timeline(), describe(document_->plan())};
  refresh();
}

QString PlansPage::pinPlanFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return tr("Cannot read %1").arg(path);
  auto plan = est::parse_plan(file.readAll().toStdString());
  if (!plan) return tr("%1: %2").arg(path, QString::fromStdString(plan.error_text()));
  auto estimate = std::make_shared<EstimateOutcome>(compute_estimate(*plan));
  auto timeline = std::make_shared<TimelineOutcome>(compute_timeline(*estimate));
  pinned_ = Pinned{*plan, estimate, timeline, describe(*plan)};
  refresh();
  return {};
}

void PlansPage::refresh() {
  if (!pinned_) return;
  const auto current = document_->estimate();
  if (!pinned_->estimate || !pinned_->estimate->estimate) {
    status_->setText(tr("The pinned plan has errors; pin a valid plan."));
    model_.setDiff({}, {});
    return;
  }
  if (!current || !current->estimate) {
    status_->setText(tr("The current plan has errors (see the Plan page); A is %1").arg(pinned_->label));
    model_.setDiff({}, {});
    return;
  }
  auto changes = est::plan_field_changes(pinned_->plan, document_->plan());
  status_->setText(tr("A: %1<br>B: %2 — %n field(s) differ", "", static_cast<int>(changes.size()))
                       .arg(pinned_->label.toHtmlEscaped(), describe(document_->plan()).toHtmlEscaped()));
  model_.setDiff(std::move(changes), est::compare_estimates(*pinned_->estimate->estimate, *current->estimate));
  const auto pinned_index = pinned_->timeline ? pinned_->timeline->index : nullptr;
  const auto timeline = document_->timeline();
  const auto current_index = timeline ? timeline->index : nullptr;
  // One axis for both, from 0 to the longer iteration's end: the shorter one shows as shorter.
  std::int64_t end_ns = 1;
  for (const auto& index : {pinned_index, current_index}) {
    if (index) end_ns = std::max(end_ns, index->end_ns());
  }
  for (TimelineWidget* view : {pinned_view_, current_view_}) view->setExtent(0, end_ns);
  pinned_view_->setTimeline(pinned_index, {});
  current_view_->setTimeline(current_index, {});
  pinned_view_->fitAll();  // the shared axis carries it to the other view
}

QString PlansPage::status() const { return status_->text(); }

}  // namespace plansight::gui
