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
      if (role == Qt::ToolTipRole) return time_part_meaning(part);
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
    case SentColumn: {
      const double bytes = part == TimePart::tp_comm   ? breakdown_.tp_bytes
                           : part == TimePart::cp_comm ? breakdown_.cp_bytes
                           : part == TimePart::pp_comm ? breakdown_.pp_bytes
                           : part == TimePart::dp_comm ? breakdown_.dp_bytes
                           : part == TimePart::ep_comm ? breakdown_.ep_bytes
                                                       : -1.0;
      if (bytes < 0) return {};  // not a communication part
      if (role == Qt::DisplayRole) return format_gib(bytes);
      if (role == ValueRole) return bytes;
      if (role == Qt::TextAlignmentRole) return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
      if (role == Qt::ToolTipRole) return tr("Bytes one GPU of the first pipeline stage sends per iteration in this group's collectives, hidden behind compute or not");
      return {};
    }
    default:
      return {};
  }
}

QVariant BreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section == ShareColumn) {
    return tr("Share of the iteration time (the bubble fraction above is relative to the stages' work)");
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case PartColumn:
      return tr("Part");
    case TimeColumn:
      return tr("Time");
    case ShareColumn:
      return tr("Share");
    case SentColumn:
      return tr("Sent per GPU");
    default:
      return {};
  }
}

}  // namespace plansight::gui
