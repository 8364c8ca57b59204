// The operators of one layer and of the LM head (estimator/operator_report.h) as a table: block,
// operator, pass, GEMM shape, GFLOP, MiB, FLOP/byte, time, bound, TFLOP/s, share of the roof and
// of the block's time. ValueRole gives the number behind a cell, for sorting and tests.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "plansight/estimator/operator_report.h"

namespace plansight::gui {

class OperatorTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    BlockColumn, OperatorColumn, PassColumn, ShapeColumn, FlopsColumn, BytesColumn, IntensityColumn, TimeColumn,
    BoundColumn, AchievedColumn, RoofColumn, ShareColumn, TileColumn, FillColumn, ColumnCount
  };
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit OperatorTableModel(QObject* parent = nullptr);
  void setRows(std::vector<estimator::OperatorRow> rows);
  void clear();
  const std::vector<estimator::OperatorRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<estimator::OperatorRow> rows_;
};

// Display text shared by the table, the chart's hover text and the page.
QString operator_pass_text(const estimator::OperatorCost& op);   // "forward", "backward dX", ...
QString operator_shape_text(const estimator::OperatorCost& op);  // "2048 × 4608 × 12288 (×12)"; empty for non-GEMMs
QString operator_row_text(const estimator::OperatorRow& row);    // one line with every column

}  // namespace plansight::gui
