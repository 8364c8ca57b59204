// The Runs page: what the run store holds (probe runs, imported traces, saved plans), newest
// first, with a run's summary and its timeline (measured, imported or predicted) in the same
// timeline view as the prediction. Loads lazily on first show, so starting the app never
// creates a database; every store call is the repository's worker's.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QTableView;

namespace plansight::gui {

class PlanDocument;
class RunListModel;
class RunRepository;
class TimelineWidget;

class RunsPage : public QWidget {
  Q_OBJECT

 public:
  RunsPage(PlanDocument* document, RunRepository* repository, QWidget* parent = nullptr);
  RunListModel* model() const { return model_; }
  TimelineWidget* timeline() const { return view_; }
  void selectRun(int row);

 signals:
  void statusMessage(const QString& text);
  void planOpened();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void onRunsChanged();
  void onSelection();
  void onTimelineLoaded();
  void openPlan();
  void savePlan();

  PlanDocument* document_;
  RunRepository* repository_;
  RunListModel* model_;
  QTableView* table_;
  QLabel* location_;
  QLabel* details_;
  QComboBox* source_;
  TimelineWidget* view_;
  bool loaded_ = false;
};

}  // namespace plansight::gui
