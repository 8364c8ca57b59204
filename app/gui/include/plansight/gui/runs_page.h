// The Runs page: what the run store holds (probe runs, imported traces, saved plans), newest
// first, with a run's summary and its timeline (measured, imported or predicted) in the same
// timeline view as the prediction. Runs are renamed and deleted (after a confirmation) here,
// two selected runs are compared (where their time moved, per phase and kernel class, as
// `plansight diff`), and traces are imported (as `plansight import`). Loads lazily on first
// show, so starting the app never creates a database; every store call is the repository's
// worker's, and its errors become the page's message.
#pragma once

#include <QList>
#include <QWidget>
#include <cstdint>

class QComboBox;
class QLabel;
class QPushButton;
class QTabWidget;
class QTableView;

namespace plansight::gui {

class PlanDocument;
class RunDiffModel;
class RunListModel;
class RunRepository;
class TimelineWidget;

class RunsPage : public QWidget {
  Q_OBJECT

 public:
  RunsPage(PlanDocument* document, RunRepository* repository, QWidget* parent = nullptr);
  RunListModel* model() const { return model_; }
  RunDiffModel* diffModel() const { return diff_model_; }
  TimelineWidget* timeline() const { return view_; }
  QTabWidget* detailTabs() const { return tabs_; }
  void selectRun(int row);
  void selectRuns(const QList<int>& rows);  // the first becomes the current run
  QList<std::int64_t> selectedRunIds() const;
  QString message() const;

  // Ask for a new name (a dialog) / ask to confirm, then change the store.
  void renameSelected();
  void deleteSelected();
  // Where the time moved from the first selected run (A) to the second (B).
  void compareSelected();
  // A file or folder chosen in a dialog, or given.
  void importTraceFile();
  void importTraceFolder();
  void importTrace(const QString& path);

 signals:
  void statusMessage(const QString& text);
  void planOpened();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* buildTimelineTab();
  QWidget* buildDiffTab();
  void onRunsChanged();
  void onSelection();
  void onTimelineLoaded();
  void onDiffReady();
  void updateButtons();
  void setMessage(const QString& text, bool error);
  void openPlan();
  void savePlan();

  PlanDocument* document_;
  RunRepository* repository_;
  RunListModel* model_;
  RunDiffModel* diff_model_;
  QTableView* table_;
  QLabel* location_;
  QLabel* message_;
  QLabel* details_;
  QComboBox* source_;
  TimelineWidget* view_;
  QTabWidget* tabs_;
  QLabel* diff_title_;
  QPushButton* rename_;
  QPushButton* delete_;
  QPushButton* compare_;
  QPushButton* open_;
  bool loaded_ = false;
};

}  // namespace plansight::gui
