// The Examples panel: a worked example of a lecture or paper (estimator/examples.h) with its
// title, source and explanation, a table of its rows (ours beside the published value), and
// "your plan": the same metric for the plan being edited, so that after opening an example a
// lecturer can change the plan and show what moves.
#pragma once

#include <QAbstractTableModel>
#include <QWidget>

#include <optional>
#include <vector>

#include "plansight/estimator/examples.h"

class QLabel;
class QTableView;

namespace plansight::gui {

class ExampleRowsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { label, ours, published, error, unit, column_count };
  using QAbstractTableModel::QAbstractTableModel;

  void setRows(std::vector<estimator::ExampleResult> rows, int current);
  const std::vector<estimator::ExampleResult>& rows() const { return rows_; }
  int currentRow() const { return current_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<estimator::ExampleResult> rows_;
  int current_ = -1;  // the row whose plan was opened; shown in bold
};

// A value as the table shows it: four significant digits ("651.9", "0.09375" -> "0.09375").
QString example_value_text(double value);

class ExamplePanel : public QWidget {
  Q_OBJECT

 public:
  explicit ExamplePanel(QWidget* parent = nullptr);

  // Evaluates every row (one estimate each); returns an error message, empty on success.
  QString setExample(const estimator::Example& example, int row);
  // The plan being edited and its estimate (none while it is invalid): updates "your plan".
  void setCurrentPlan(const estimator::Plan& plan, const estimator::Estimate* estimate);

  ExampleRowsModel* model() { return &model_; }
  QString yourPlanText() const;
  const std::optional<estimator::Example>& example() const { return example_; }

 private:
  std::optional<estimator::Example> example_;
  int row_ = 0;
  ExampleRowsModel model_;
  QLabel* title_;
  QLabel* source_;
  QLabel* your_plan_;
  QTableView* table_;
};

}  // namespace plansight::gui
