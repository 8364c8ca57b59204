// The main window: pages (Plan, Memory, Time & cost, Timeline, Runs, Search, Probe, Compare, Sweep,
// Plans, Placement, Operators) over one PlanDocument, the File menu (open/save plan JSON, import
// config.json, export PNG/SVG), and the last plan restored from QSettings on the next start (the
// default plan otherwise).
#pragma once

#include <QMainWindow>
#include <string>
#include <QString>

class QAction;
class QDockWidget;
class QLabel;
class QPushButton;
class QTimer;
class QSettings;
class QTabWidget;

namespace plansight::gui {

class ComparePage;
class ExamplePanel;
class MemoryPage;
class PlanDocument;
class PlanForm;
class ProbePage;
class RunRepository;
class RunsPage;
class SearchPage;
class SweepPage;
class PlansPage;
class PlacementPage;
class OperatorsPage;
class TimeCostPage;
class TimelinePage;

struct MainWindowOptions {
  QString settings_path;  // empty: the user's settings; tests pass a temporary .ini file
  QString store_path;     // empty: the user's run store (opened when the Runs page first shows)
  bool restore_last_plan = true;
  // How long an estimate runs before the window says it is busy and offers to cancel it: long
  // enough that the usual plan's estimate never flashes the button. Tests of that button use 0.
  int busy_delay_ms = 300;
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(const MainWindowOptions& options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  PlanDocument* document() const { return document_; }
  PlanForm* planForm() const { return plan_form_; }
  MemoryPage* memoryPage() const { return memory_page_; }
  TimeCostPage* timeCostPage() const { return time_page_; }
  TimelinePage* timelinePage() const { return timeline_page_; }
  RunsPage* runsPage() const { return runs_page_; }
  SearchPage* searchPage() const { return search_page_; }
  ProbePage* probePage() const { return probe_page_; }
  ComparePage* comparePage() const { return compare_page_; }
  SweepPage* sweepPage() const { return sweep_page_; }
  PlansPage* plansPage() const { return plans_page_; }
  PlacementPage* placementPage() const { return placement_page_; }
  OperatorsPage* operatorsPage() const { return operators_page_; }
  RunRepository* runs() const { return runs_; }
  QTabWidget* pages() const { return tabs_; }
  ExamplePanel* examplePanel() const { return example_panel_; }
  QDockWidget* exampleDock() const { return example_dock_; }

  // Presentation mode (View menu): fonts 1.5x for a projector, remembered in the settings.
  void setPresentationMode(bool on);
  bool presentationMode() const { return presentation_; }

  // Examples menu: opens row `row` (0-based) of the named example as the plan being edited and
  // shows the example beside the pages; returns an error message, empty on success.
  QString openExample(const QString& name, int row);

  // File operations; each returns an error message, empty on success.
  QString openPlan(const QString& path);
  QString savePlan(const QString& path);
  // The plan differs from the one last opened or saved (the default plan when there is no file).
  bool hasUnsavedEdits() const;
  // Before New or Open replaces an edited plan: asks Save / Discard / Cancel ("Save them before
  // `action`?", e.g. "starting a new plan"); true to go on.
  bool confirmDiscard(const QString& action);
  // File > New: the default plan, after confirmDiscard().
  void newPlan();
  // File > Open/New run database: the Runs, Compare and Probe pages use `path` from now on, and
  // so does the next start (kept in the settings).
  void setRunDatabase(const QString& path);
  QString exportCurrentPage(const QString& path);  // .png or .svg by suffix
  // Every page as <dir>/<nn>-<name>.png, once the estimate and timeline are in; runs a tiny
  // probe first (plansight-probe, TP 2 x PP 2) so that Runs, Probe and Compare show real data.
  QString saveScreenshots(const QString& dir);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void restorePlan(bool restore);
  void rememberPlan();
  void onOpen();
  void onSave(bool ask);
  void onExport(const QString& suffix);
  void showField(const QString& field);
  void updateTitle();

  QSettings* settings_;
  PlanDocument* document_;
  QTabWidget* tabs_;
  PlanForm* plan_form_;
  MemoryPage* memory_page_;
  TimeCostPage* time_page_;
  TimelinePage* timeline_page_;
  RunRepository* runs_;
  RunsPage* runs_page_;
  SearchPage* search_page_;
  ProbePage* probe_page_;
  ComparePage* compare_page_;
  SweepPage* sweep_page_;
  PlansPage* plans_page_;
  PlacementPage* placement_page_;
  OperatorsPage* operators_page_;
  QLabel* busy_;
  QPushButton* cancel_estimate_;  // shown while an estimate has run for kBusyAfterMs
  QTimer* busy_timer_;
  QDockWidget* example_dock_;
  ExamplePanel* example_panel_;
  QString plan_path_;
  std::string baseline_json_;  // the plan as last opened, saved or created, as JSON
  bool presentation_ = false;
  qreal base_point_size_ = 0;  // the application font's size outside presentation mode
};

}  // namespace plansight::gui
