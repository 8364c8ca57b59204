// The Search page: the layout search of the current plan on a worker thread, one tensor-parallel
// degree at a time (ChunkedSearch: the same result as one search_layouts() call), with progress
// per chunk and elapsed time, constraints (SearchConstraintsForm: fixed or bounded layout
// fields, framework rules, attention, how many layouts to show), Cancel that stops the worker at
// the next chunk, the ranked layouts in a sortable table, the rejection summary, and "Apply to plan", which gives the Plan page the
// selected row's layout.
#pragma once

#include <QElapsedTimer>
#include <QWidget>
#include <atomic>
#include <cstdint>
#include <memory>

#include "plansight/estimator/layout_search.h"
#include "plansight/gui/job_runner.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTimer;

namespace plansight::gui {

class PlanDocument;
class SearchConstraintsForm;
class SearchResultModel;

class SearchPage : public QWidget {
  Q_OBJECT

 public:
  explicit SearchPage(PlanDocument* document, QWidget* parent = nullptr);
  ~SearchPage() override;  // waits for a running search (its result is dropped)

  void startSearch();
  void cancelSearch();
  // Applies the selected row (or `proxy_row` when >= 0) to the document; false if none.
  bool applySelected(int proxy_row = -1);
  bool isRunning() const { return running_; }
  QString statusText() const;

  SearchResultModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }
  QString summaryText() const;
  SearchConstraintsForm* constraints() const { return constraints_; }

 signals:
  void searchFinished();  // a (not cancelled) search delivered its result or its errors
  void chunkDone(int done, int total);  // progress of the running search
  void statusMessage(const QString& message);

 private:
  void deliver(std::shared_ptr<const estimator::SearchResult> result, QString error);
  void onChunkDone(int done, int total, qint64 next_tp);
  void setRunning(bool running);
  void updateElapsed();

  PlanDocument* document_;
  SearchResultModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QPushButton* start_;
  QPushButton* cancel_;
  QPushButton* apply_;
  QProgressBar* busy_;
  QLabel* elapsed_label_;
  QLabel* status_;
  QPlainTextEdit* summary_;
  SearchConstraintsForm* constraints_;
  estimator::AttentionKernel searched_attention_ = estimator::AttentionKernel::flash;
  QTimer* ticker_;
  QElapsedTimer elapsed_;
  int chunks_done_ = 0, chunks_total_ = 0;
  bool running_ = false;
  JobRunner jobs_;  // the search whose result is wanted is its latest job; last member: destroyed first
};

}  // namespace plansight::gui
