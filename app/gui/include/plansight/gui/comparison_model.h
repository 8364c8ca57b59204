// One table of the Compare page: rows of predicted vs measured (phases in seconds, or memory
// categories in bytes) with the error predicted / measured - 1. Qt::UserRole holds raw numbers.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "plansight/gui/run_comparison.h"

namespace plansight::gui {

class ComparisonModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum class Unit { seconds, bytes };
  enum Column { kName, kPredicted, kMeasured, kError, kOfStep, kColumnCount };

  explicit ComparisonModel(Unit unit, QObject* parent = nullptr);
  void setRows(std::vector<ComparisonRow> rows);
  // The first column's header: "Phase" (seconds) or "Memory" (bytes) unless set.
  void setNameHeader(QString header);
  const std::vector<ComparisonRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QString value_text(double v) const;
  QString name_header_;

  Unit unit_;
  std::vector<ComparisonRow> rows_;
};

}  // namespace plansight::gui
