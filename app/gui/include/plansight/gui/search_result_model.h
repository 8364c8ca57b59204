// The Search page's results: one row per ranked layout of estimator::search_layouts(), one column
// per layout dimension and figure. Display text is formatted; Qt::UserRole holds the raw number
// (or text) so that a QSortFilterProxyModel sorts numerically.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "plansight/estimator/layout_search.h"

namespace plansight::gui {

class SearchResultModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRank, kTp, kPp, kVpp, kDp, kCp, kMicroBatch, kSp, kZero, kRecompute, kSchedule, kPrecision, kOffload,
    kTokensPerS, kMfu, kIteration, kMemoryGib, kDays, kColumnCount
  };
  static constexpr int kSortRole = Qt::UserRole;

  explicit SearchResultModel(QObject* parent = nullptr);

  void setResult(std::shared_ptr<const estimator::SearchResult> result);  // null: empty
  std::shared_ptr<const estimator::SearchResult> result() const { return result_; }
  const estimator::RankedLayout* layoutAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const estimator::SearchResult> result_;
};

}  // namespace plansight::gui
