// Per-stage memory table model (see memory_model.h).
#include "plansight/gui/memory_model.h"

#include <QFont>

#include "plansight/gui/format.h"

namespace plansight::gui {

MemoryModel::MemoryModel(QObject* parent) : QAbstractTableModel(parent) {}

void MemoryModel::setMemory(const estimator::MemoryEstimate& memory) {
  beginResetModel();
  memory_ = memory;
  endResetModel();
}

void MemoryModel::clear() { setMemory({}); }

int MemoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(memory_.stages.size());
}

int MemoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MemoryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto& stage = memory_.stages[static_cast<std::size_t>(index.row())];
  const int column = index.column();
  double value = 0;
  if (column == StageColumn) {
    value = static_cast<double>(stage.stage);
  } else if (column == LayersColumn) {
    value = static_cast<double>(stage.layers);
  } else if (column == TotalColumn) {
    value = stage.memory.total_bytes();
  } else {
    value = memory_part_bytes(stage.memory, static_cast<MemoryPart>(column - FirstPartColumn));
  }
  const bool bytes = column >= FirstPartColumn;
  switch (role) {
    case Qt::DisplayRole:
      return bytes ? format_gib(value) : QString::number(static_cast<qlonglong>(value));
    case Qt::ToolTipRole:
      return bytes ? format_bytes_exact(value) : QVariant();
    case ValueRole:
      return value;
    case Qt::TextAlignmentRole:
      return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
      if (stage.stage == memory_.most_loaded_stage) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    default:
      return {};
  }
}

QVariant MemoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount) return {};
  if (section == StageColumn) return tr("Stage");
  if (section == LayersColumn) return tr("Layers");
  if (section == TotalColumn) return tr("Total");
  return memory_part_name(static_cast<MemoryPart>(section - FirstPartColumn));
}

}  // namespace plansight::gui
