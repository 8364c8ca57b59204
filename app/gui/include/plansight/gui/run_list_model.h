// The runs of the store as a table, newest first: id, name, kind, status, device, created,
// measured step time and the timelines it holds. RunIdRole gives the run's id.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "plansight/gui/run_repository.h"

namespace plansight::gui {

class RunListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    IdColumn,
    NameColumn,
    KindColumn,
    StatusColumn,
    DeviceColumn,
    CreatedColumn,
    StepColumn,
    TimelinesColumn,
    ColumnCount
  };
  static constexpr int RunIdRole = Qt::UserRole + 1;

  explicit RunListModel(QObject* parent = nullptr);
  void setRuns(std::vector<RunEntry> runs);
  const RunEntry* entry(int row) const;
  int rowOf(std::int64_t run_id) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<RunEntry> runs_;
};

}  // namespace plansight::gui
