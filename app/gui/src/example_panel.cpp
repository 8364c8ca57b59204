// The Examples panel (example_panel.h).
#include "plansight/gui/example_panel.h"

#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace est = plansight::estimator;

QString example_value_text(double value) { return QString::number(value, 'g', 4); }

void ExampleRowsModel::setRows(std::vector<est::ExampleResult> rows, int current) {
  beginResetModel();
  rows_ = std::move(rows);
  current_ = current;
  endResetModel();
}

int ExampleRowsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int ExampleRowsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : column_count; }

QVariant ExampleRowsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const est::ExampleResult& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::FontRole && index.row() == current_) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role == Qt::TextAlignmentRole && index.column() != label && index.column() != unit) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole && index.column() == error) {
    return tr("tolerance %1: %2").arg(format_percent(r.tolerance), r.within_tolerance() ? tr("within") : tr("outside"));
  }
  if (role == Qt::UserRole) {  // the numbers, for tests and sorting
    switch (index.column()) {
      case ours: return r.ours;
      case published: return r.published;
      case error: return r.relative_error();
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case label: return QString::fromStdString(r.label);
    case ours: return example_value_text(r.ours);
    case published: return example_value_text(r.published);
    case error: return (r.relative_error() >= 0 ? QStringLiteral("+") : QString()) + format_percent(r.relative_error());
    case unit: return r.unit.empty() ? QStringLiteral("—") : QString::fromStdString(r.unit);
    default: return {};
  }
}

QVariant ExampleRowsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case label: return tr("Row");
    case ours: return tr("Ours");
    case published: return tr("Published");
    case error: return tr("Error");
    case unit: return tr("Unit");
    default: return {};
  }
}

ExamplePanel::ExamplePanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("examplePanel"));
  auto* layout = new QVBoxLayout(this);
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("exampleTitle"));
  title_->setWordWrap(true);
  source_ = new QLabel(this);
  source_->setObjectName(QStringLiteral("exampleSource"));
  source_->setWordWrap(true);
  source_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  your_plan_ = new QLabel(this);
  your_plan_->setObjectName(QStringLiteral("exampleYourPlan"));
  your_plan_->setWordWrap(true);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("exampleRows"));
  table_->setModel(&model_);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(ExampleRowsModel::label, QHeaderView::Stretch);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  layout->addWidget(title_);
  layout->addWidget(table_, 1);
  layout->addWidget(your_plan_);
  layout->addWidget(source_);
}

QString ExamplePanel::setExample(const est::Example& example, int row) {
  auto results = est::evaluate(example);
  if (!results) return QString::fromStdString(results.error_text());
  example_ = example;
  row_ = row;
  model_.setRows(std::move(*results), row);
  title_->setText(QStringLiteral("<b>%1</b>").arg(QString::fromStdString(example.title).toHtmlEscaped()));
  source_->setText(tr("%1<br><i>Source:</i> %2")
                       .arg(QString::fromStdString(example.explanation).toHtmlEscaped(),
                            QString::fromStdString(example.source).toHtmlEscaped()));
  your_plan_->clear();
  return {};
}

void ExamplePanel::setCurrentPlan(const est::Plan& plan, const est::Estimate* estimate) {
  if (!example_ || row_ < 0 || row_ >= static_cast<int>(example_->rows.size())) return;
  const est::ExampleRow& row = example_->rows[static_cast<std::size_t>(row_)];
  if (!estimate) {
    your_plan_->setText(tr("Your plan: not estimated (it has errors; see the Plan page)"));
    return;
  }
  auto value = est::plan_metric(row.metric, plan, *estimate);
  if (!value) {
    your_plan_->setText(tr("Your plan: %1").arg(QString::fromStdString(value.error_text())));
    return;
  }
  const double change = model_.rows().at(static_cast<std::size_t>(row_)).ours;
  QString unit;
  for (const auto& m : est::plan_metrics()) {
    if (m.name == row.metric) unit = QString::fromStdString(std::string(m.unit));
  }
  your_plan_->setText(tr("Your plan: <b>%1 %2</b> (row \"%3\": %4; published %5)")
                          .arg(example_value_text(*value), unit, QString::fromStdString(row.label).toHtmlEscaped(),
                               example_value_text(change), example_value_text(row.published)));
}

QString ExamplePanel::yourPlanText() const { return your_plan_->text(); }

}  // namespace plansight::gui
