// Where one iteration's time goes (compute, exposed TP/CP/PP/DP communication, bubble,
// optimizer) as a table: part, time, share of the iteration. Empty when no time is available.
#pragma once

#include <QAbstractTableModel>

#include "plansight/estimator/estimate.h"
#include "plansight/gui/theme.h"

namespace plansight::gui {

class BreakdownModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // SentColumn: for a communication part, the bytes one GPU of the first stage sends per
  // iteration in that group's collectives, hidden or exposed (TimeBreakdown::*_bytes).
  enum Column { PartColumn, TimeColumn, ShareColumn, SentColumn, ColumnCount };
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit BreakdownModel(QObject* parent = nullptr);
  // Rows only when the time was predicted (a given throughput has no breakdown).
  void setTime(const estimator::TimeEstimate& time);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  estimator::TimeBreakdown breakdown_;
  bool available_ = false;
};

}  // namespace plansight::gui
