// Where time moved between two runs, as a table: the makespan, then every phase and every
// kernel class with time in either run (the rows `plansight diff A B` prints), with A, B, B - A
// and B / A. Qt::UserRole gives seconds (the ratio as a number, NaN where A is 0).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "plansight/estimator/timeline_diff.h"

namespace plansight::gui {

class RunDiffModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kGroup, kKey, kA, kB, kDelta, kRatio, kColumnCount };

  explicit RunDiffModel(QObject* parent = nullptr);
  void setDiff(const estimator::TimelineDiff& diff);
  void clear();
  // The row of (group, key), e.g. ("phase", "forward"); -1 when absent.
  int rowOf(const QString& group, const QString& key) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString group;
    estimator::DiffRow diff;
  };
  std::vector<Row> rows_;
};

}  // namespace plansight::gui
