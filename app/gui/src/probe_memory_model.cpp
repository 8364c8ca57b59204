// ProbeMemoryModel: measured memory per category (see probe_memory_model.h).
#include "plansight/gui/probe_memory_model.h"

#include <QFont>

#include "plansight/core/probe_events.h"
#include "plansight/gui/format.h"

namespace plansight::gui {

ProbeMemoryModel::ProbeMemoryModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProbeMemoryModel::setMemory(const std::map<std::string, std::int64_t>& bytes) {
  beginResetModel();
  rows_.clear();
  for (const auto& category : core::memory_categories()) {
    auto it = bytes.find(category);
    if (it != bytes.end()) rows_.emplace_back(QString::fromStdString(category), it->second);
  }
  endResetModel();
}

int ProbeMemoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ProbeMemoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant ProbeMemoryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto& [name, bytes] = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::UserRole) return index.column() == kCategory ? QVariant(name) : QVariant(static_cast<qlonglong>(bytes));
  if (role == Qt::TextAlignmentRole) {
    return index.column() == kCategory ? int(Qt::AlignLeft | Qt::AlignVCenter) : int(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::FontRole && name == QLatin1String("total")) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role != Qt::DisplayRole) return {};
  // MiB: the probe's models hold megabytes, where GiB would read 0.00.
  return index.column() == kCategory ? name : format_fixed(static_cast<double>(bytes) / double(1 << 20), 2) + QStringLiteral(" MiB");
}

QVariant ProbeMemoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kCategory: return tr("Memory");
    case kMemory: return tr("Peak (largest rank)");
    default: return {};
  }
}

}  // namespace plansight::gui
