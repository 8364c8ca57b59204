// Iteration-time breakdown table model (see breakdown_model.h).
#include "plansight/gui/breakdown_model.h"

#include <QColor>

#include "plansight/gui/format.h"

namespace plansight::gui {

BreakdownModel::BreakdownModel(QObject* parent) : QAbstractTableModel(parent) {}

void BreakdownModel::setTime(const estimator::TimeEstimate& time) {
  beginResetModel();
  available_ = time.available && time.predicted;
  breakdown_ = time.breakdown;
  endResetModel();
}

void BreakdownModel::clear() { setTime({}); }

int BreakdownModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !available_ ? 0 : static_cast<int>(kTimePartCount);
}

int BreakdownModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant BreakdownModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto part = static_cast<TimePart>(index.row());
  const double seconds = time_part_seconds(breakdown_, part);
  const double total = breakdown_.total_s();
  const double share = total > 0 ? seconds / total : 0;
  switch (index.column()) {
    case PartColumn:
      if (role == Qt::DisplayRole) return time_part_name(part);
      if (role == Qt::DecorationRole) return time_part_colour(part);
      return {};
    case TimeColumn:
      if (role == Qt::DisplayRole) return format_seconds(seconds);
      if (role == ValueRole) return seconds;
      if (role == Qt::TextAlignmentRole) return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case ShareColumn:
      if (role == Qt::DisplayRole) return format_percent(share);
      if (role == ValueRole) return share;
      if (role == Qt::TextAlignmentRole) return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default:
      return {};
  }
}

QVariant BreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case PartColumn:
      return tr("Part");
    case TimeColumn:
      return tr("Time");
    case ShareColumn:
      return tr("Share");
    default:
      return {};
  }
}

}  // namespace plansight::gui
