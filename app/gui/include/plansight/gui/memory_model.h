// Memory per GPU of every pipeline stage as a table (stage, layers, the six components, total):
// the data of the memory chart and of the exact-number table under it. Display shows GiB,
// ToolTipRole the exact bytes, ValueRole the raw double, so views and tests read the same numbers.
#pragma once

#include <QAbstractTableModel>

#include "plansight/estimator/estimate.h"
#include "plansight/gui/theme.h"

namespace plansight::gui {

class MemoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    StageColumn,
    LayersColumn,
    FirstPartColumn,
    TotalColumn = FirstPartColumn + int(kMemoryPartCount),
    ColumnCount
  };
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit MemoryModel(QObject* parent = nullptr);
  void setMemory(const estimator::MemoryEstimate& memory);
  void clear();
  const estimator::MemoryEstimate& memory() const { return memory_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  estimator::MemoryEstimate memory_;
};

}  // namespace plansight::gui
