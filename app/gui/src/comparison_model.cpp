// ComparisonModel: predicted vs measured rows as a table (see comparison_model.h).
#include "plansight/gui/comparison_model.h"

#include <QFont>

#include "plansight/core/plan_run_comparison.h"
#include "plansight/gui/format.h"

namespace plansight::gui {

ComparisonModel::ComparisonModel(Unit unit, QObject* parent) : QAbstractTableModel(parent), unit_(unit) {}

void ComparisonModel::setNameHeader(QString header) {
  name_header_ = std::move(header);
  emit headerDataChanged(Qt::Horizontal, kName, kName);
}

void ComparisonModel::setRows(std::vector<ComparisonRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int ComparisonModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int ComparisonModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QString ComparisonModel::value_text(double v) const {
  return unit_ == Unit::seconds ? format_seconds(v) : format_fixed(v / double(1 << 20), 2) + QStringLiteral(" MiB");
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const ComparisonRow& r = rows_[static_cast<std::size_t>(index.row())];
  const auto error = r.error();
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kName: return r.name;
      case kPredicted: return r.predicted;
      case kMeasured: return r.has_measured ? QVariant(r.measured) : QVariant();
      case kError: return error ? QVariant(*error) : QVariant();
      case kOfStep: return r.of_step() ? QVariant(*r.of_step()) : QVariant();
      default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole) {
    return index.column() == kName ? int(Qt::AlignLeft | Qt::AlignVCenter) : int(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::FontRole && (r.name == QLatin1String("step") || r.name == QLatin1String("total"))) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kName: return r.name;
    case kPredicted: return value_text(r.predicted);
    case kMeasured: return r.has_measured ? value_text(r.measured) : QStringLiteral("-");
    case kError: return QString::fromStdString(core::percent_text(error));
    case kOfStep: return QString::fromStdString(core::percent_text(r.of_step()));
    default: return {};
  }
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    if (section == kError) return tr("predicted / measured - 1: + the estimator predicted more than was measured, - less; "
                                     "none for a phase under 5% of the step");
    if (section == kOfStep) return tr("(predicted - measured) / the measured step: the phase's part in the step's error");
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case kName: return !name_header_.isEmpty() ? name_header_ : unit_ == Unit::seconds ? tr("Phase") : tr("Memory");
    case kPredicted: return tr("Predicted");
    case kMeasured: return tr("Measured");
    case kError: return tr("Error");
    case kOfStep: return tr("Of step");
    default: return {};
  }
}

}  // namespace plansight::gui
