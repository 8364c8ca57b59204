// A table of figures predicted beside measured, already formatted by their maker (FigureRow,
// run_comparison.h): the Compare page's throughput (tokens/s, MFU) and tensor-core shares,
// whose units differ row by row, so the rows carry their text. Qt::UserRole holds raw numbers.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "plansight/gui/run_comparison.h"

namespace plansight::gui {

class FigureModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kName, kPredicted, kMeasured, kDifference, kColumnCount };

  // `name_header`: the first column's title; `difference_tip`: what the difference column means.
  FigureModel(QString name_header, QString difference_tip, QObject* parent = nullptr);
  void setRows(std::vector<FigureRow> rows);
  const std::vector<FigureRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QString name_header_, difference_tip_;
  std::vector<FigureRow> rows_;
};

}  // namespace plansight::gui
