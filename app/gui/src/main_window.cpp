// Main window: pages, menus, status and settings (see main_window.h); file operations are in
// main_window_files.cpp.
#include "plansight/gui/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QTabWidget>

#include "plansight/estimator/examples.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/chart_export.h"
#include "plansight/gui/compare_page.h"
#include "plansight/gui/example_panel.h"
#include "plansight/gui/memory_page.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/plan_form.h"
#include "plansight/gui/probe_page.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/runs_page.h"
#include "plansight/gui/search_page.h"
#include "plansight/gui/placement_page.h"
#include "plansight/gui/operators_page.h"
#include "plansight/gui/plans_page.h"
#include "plansight/gui/sweep_page.h"
#include "plansight/gui/time_cost_page.h"
#include "plansight/gui/timeline_page.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {
constexpr const char* kLastPlanKey = "plan/last";
constexpr const char* kRunDatabaseKey = "runs/database";
constexpr const char* kPresentationKey = "view/presentation";
// A projector at the back of a lecture hall: text half as large again reads from the back rows
// and still fits the pages at 1280 x 800.
constexpr qreal kPresentationScale = 1.5;
}

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent),
      settings_(options.settings_path.isEmpty()
                    ? new QSettings(QStringLiteral("Plansight"), QStringLiteral("plansight-gui"), this)
                    : new QSettings(options.settings_path, QSettings::IniFormat, this)),
      document_(new PlanDocument(this)),
      tabs_(new QTabWidget(this)) {
  plan_form_ = new PlanForm(document_, this);
  memory_page_ = new MemoryPage(document_, this);
  time_page_ = new TimeCostPage(document_, this);
  timeline_page_ = new TimelinePage(document_, this);
  // The store tests pass, else the one the user chose last (File > Open run database), else the
  // default store.
  runs_ = new RunRepository(options.store_path.isEmpty() ? settings_->value(QString::fromLatin1(kRunDatabaseKey)).toString()
                                                         : options.store_path,
                            this);
  runs_page_ = new RunsPage(document_, runs_, this);
  search_page_ = new SearchPage(document_, this);
  probe_page_ = new ProbePage(runs_, this);
  compare_page_ = new ComparePage(runs_, document_, this);
  sweep_page_ = new SweepPage(document_, this);
  plans_page_ = new PlansPage(document_, this);
  placement_page_ = new PlacementPage(document_, this);
  operators_page_ = new OperatorsPage(document_, this);
  tabs_->setObjectName(QStringLiteral("pages"));
  tabs_->addTab(plan_form_, tr("&Plan"));
  tabs_->addTab(memory_page_, tr("&Memory"));
  tabs_->addTab(time_page_, tr("&Time && cost"));
  tabs_->addTab(timeline_page_, tr("Time&line"));
  tabs_->addTab(runs_page_, tr("&Runs"));
  tabs_->addTab(search_page_, tr("&Search"));
  tabs_->addTab(probe_page_, tr("Pro&be"));
  tabs_->addTab(compare_page_, tr("&Compare"));
  tabs_->addTab(sweep_page_, tr("S&weep"));
  tabs_->addTab(plans_page_, tr("Pl&ans"));
  tabs_->addTab(placement_page_, tr("Placeme&nt"));
  tabs_->addTab(operators_page_, tr("&Operators"));
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);

  busy_ = new QLabel(this);
  busy_->setObjectName(QStringLiteral("estimateStatus"));
  statusBar()->addPermanentWidget(busy_);
  // A slow estimate (a 1000-stage pipeline of 2000 micro-batches simulates 4 million ops) says
  // so and can be stopped; one that ends within 300 ms (busy_delay_ms), every usual plan, never
  // flashes the button.
  cancel_estimate_ = new QPushButton(tr("Cancel estimate"), this);
  cancel_estimate_->setObjectName(QStringLiteral("cancelEstimate"));
  cancel_estimate_->setVisible(false);
  statusBar()->addPermanentWidget(cancel_estimate_);
  busy_timer_ = new QTimer(this);
  busy_timer_->setSingleShot(true);
  busy_timer_->setInterval(options.busy_delay_ms);
  connect(busy_timer_, &QTimer::timeout, this, [this] {
    if (document_->isIdle()) return;
    busy_->setText(tr("estimating…"));
    cancel_estimate_->setVisible(true);
  });
  connect(document_, &PlanDocument::busy, busy_timer_, qOverload<>(&QTimer::start));
  connect(document_, &PlanDocument::idle, this, [this] {
    busy_timer_->stop();
    cancel_estimate_->setVisible(false);
  });
  connect(cancel_estimate_, &QPushButton::clicked, this, [this] {
    document_->cancel();
    busy_->setText(tr("cancelling…"));
  });
  example_panel_ = new ExamplePanel(this);
  example_dock_ = new QDockWidget(tr("Example"), this);
  example_dock_->setObjectName(QStringLiteral("exampleDock"));
  example_dock_->setWidget(example_panel_);
  addDockWidget(Qt::BottomDockWidgetArea, example_dock_);
  example_dock_->hide();
  connect(plan_form_, &PlanForm::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(time_page_, &TimeCostPage::fieldActivated, this, &MainWindow::showField);
  connect(search_page_, &SearchPage::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(runs_page_, &RunsPage::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(probe_page_, &ProbePage::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(probe_page_, &ProbePage::runStored, runs_, &RunRepository::refresh);  // the Runs and Compare pages list it
  connect(probe_page_, &ProbePage::compareRequested, this, [this](qint64 run_id) {
    compare_page_->selectRun(run_id, ComparePage::Against::own_configuration);
    tabs_->setCurrentWidget(compare_page_);
  });
  connect(runs_page_, &RunsPage::planOpened, this, [this] {
    plan_path_.clear();
    updateTitle();
    tabs_->setCurrentWidget(plan_form_);
  });
  connect(document_, &PlanDocument::estimateReady, this, [this] {
    const auto outcome = document_->estimate();
    busy_->setText(outcome && outcome->estimate ? tr("estimated")
                   : document_->wasCancelled()
                       ? tr("estimate cancelled: edit the plan to estimate again")
                       : tr("%n error(s) in the plan", "", static_cast<int>(outcome->errors.size())));
    rememberPlan();
    updateTitle();
    if (example_dock_->isVisible()) {
      example_panel_->setCurrentPlan(document_->plan(), outcome && outcome->estimate ? &*outcome->estimate : nullptr);
    }
  });

  buildMenus();
  if (settings_->value(QString::fromLatin1(kPresentationKey), false).toBool()) setPresentationMode(true);
  resize(1280, 860);
  baseline_json_ = est::to_json(est::default_plan()).dump();
  restorePlan(options.restore_last_plan);
  updateTitle();
}

MainWindow::~MainWindow() {
  // The application font is global: another window (a test's next one) starts at normal size.
  if (presentation_) {
    QFont font = QApplication::font();
    font.setPointSizeF(base_point_size_);
    QApplication::setFont(font);
  }
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open plan…"), QKeySequence::Open, this, &MainWindow::onOpen);
  file->addAction(tr("&Save plan"), QKeySequence::Save, this, [this] { onSave(false); });
  file->addAction(tr("Save plan &as…"), QKeySequence::SaveAs, this, [this] { onSave(true); });
  file->addAction(tr("&New (default plan)"), QKeySequence::New, this, &MainWindow::newPlan);
  file->addSeparator();
  file->addAction(tr("Open run &database…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open run database"), runs_->location(),
                                                      tr("Plansight run database (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty()) setRunDatabase(path);
  });
  file->addAction(tr("New run data&base…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("New run database"), QStringLiteral("runs.sqlite"),
                                                      tr("Plansight run database (*.sqlite)"));
    if (!path.isEmpty()) setRunDatabase(path);
  });
  file->addSeparator();
  file->addAction(tr("&Import config.json…"), this, [this] {
    tabs_->setCurrentWidget(plan_form_);
    plan_form_->findChild<QWidget*>(QStringLiteral("importConfig"))->setFocus();
    QMetaObject::invokeMethod(plan_form_->findChild<QObject*>(QStringLiteral("importConfig")), "click");
  });
  file->addSeparator();
  file->addAction(tr("Export page as &PNG…"), this, [this] { onExport(QStringLiteral("png")); });
  QAction* svg = file->addAction(tr("Export page as S&VG…"), this, [this] { onExport(QStringLiteral("svg")); });
  svg->setEnabled(svg_export_available());
  if (!svg_export_available()) svg->setToolTip(tr("This build has no Qt SVG"));
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (int i = 0; i < tabs_->count(); ++i) {
    // The tab's own text: menus read "&&" as a literal '&' as tabs do ("&Time && cost" shows
    // "Time & cost"); stripping every '&' first left "Time  cost".
    QAction* a = view->addAction(tabs_->tabText(i), this, [this, i] { tabs_->setCurrentIndex(i); });
    if (i < 9) a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));  // Ctrl+1 .. Ctrl+9
  }
  view->addSeparator();
  QAction* presentation = view->addAction(tr("&Presentation mode (large text)"));
  presentation->setObjectName(QStringLiteral("presentationMode"));
  presentation->setCheckable(true);
  presentation->setShortcut(QKeySequence(Qt::Key_F11));
  presentation->setChecked(presentation_);
  connect(presentation, &QAction::toggled, this, &MainWindow::setPresentationMode);

  // Worked examples of lectures and papers: one submenu each, one action per row.
  QMenu* examples = menuBar()->addMenu(tr("E&xamples"));
  for (const auto& example : est::examples()) {
    QMenu* sub = examples->addMenu(QString::fromStdString(example.title));
    for (std::size_t r = 0; r < example.rows.size(); ++r) {
      const QString name = QString::fromStdString(example.name);
      QAction* a = sub->addAction(QString::fromStdString(example.rows[r].label), this, [this, name, r] {
        if (const QString error = openExample(name, static_cast<int>(r)); !error.isEmpty()) {
          QMessageBox::warning(this, tr("Example"), error);
        }
      });
      a->setObjectName(QStringLiteral("example:%1:%2").arg(name).arg(r));
    }
  }

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Plansight"), this, [this] {
    QMessageBox::about(this, tr("About Plansight"),
                       tr("<b>Plansight</b> plans, predicts and checks parallel training of transformer models: "
                          "GPUs, layout, memory per GPU, time, cost and the predicted timeline."));
  });
}

QString MainWindow::openExample(const QString& name, int row) {
  auto example = est::find_example(name.toStdString());
  if (!example) return QString::fromStdString(example.error_text());
  if (row < 0 || row >= static_cast<int>(example->rows.size())) {
    return tr("row %1 of example %2 does not exist; valid: 0 to %3").arg(row).arg(name).arg(example->rows.size() - 1);
  }
  auto plan = est::example_plan(*example, static_cast<std::size_t>(row));
  if (!plan) return QString::fromStdString(plan.error_text());
  if (const QString error = example_panel_->setExample(*example, row); !error.isEmpty()) return error;
  example_dock_->show();
  plan_path_.clear();
  document_->replacePlan(*plan);  // the panel's "your plan" follows from estimateReady
  updateTitle();
  statusBar()->showMessage(tr("Opened the example \"%1\": %2").arg(QString::fromStdString(example->title),
                                                                     QString::fromStdString(example->rows[static_cast<std::size_t>(row)].label)),
                           8000);
  return {};
}

void MainWindow::setPresentationMode(bool on) {
  if (base_point_size_ <= 0) base_point_size_ = QApplication::font().pointSizeF();
  presentation_ = on;
  QFont font = QApplication::font();
  font.setPointSizeF(on ? base_point_size_ * kPresentationScale : base_point_size_);
  QApplication::setFont(font);  // every widget, the charts' and the timeline's text included
  settings_->setValue(QString::fromLatin1(kPresentationKey), on);
  if (auto* a = findChild<QAction*>(QStringLiteral("presentationMode")); a && a->isChecked() != on) a->setChecked(on);
}

void MainWindow::restorePlan(bool restore) {
  const QString text = restore ? settings_->value(QString::fromLatin1(kLastPlanKey)).toString() : QString();
  if (!text.isEmpty()) {
    auto plan = est::parse_plan(text.toStdString());
    if (plan) {
      document_->replacePlan(*plan);
      statusBar()->showMessage(tr("Restored the last plan"), 5000);
      return;
    }
    statusBar()->showMessage(tr("The last plan could not be restored (%1); starting on the default plan")
                                 .arg(QString::fromStdString(plan.error_text())),
                             10000);
  }
  document_->replacePlan(est::default_plan());
}

void MainWindow::rememberPlan() {
  settings_->setValue(QString::fromLatin1(kLastPlanKey),
                      QString::fromStdString(est::to_json(document_->plan()).dump()));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  rememberPlan();
  settings_->sync();
  event->accept();
}

void MainWindow::showField(const QString& field) {
  QWidget* editor = plan_form_->editorFor(field);
  tabs_->setCurrentWidget(plan_form_);
  if (editor) editor->setFocus(Qt::OtherFocusReason);
}

void MainWindow::updateTitle() {
  const QString name = plan_path_.isEmpty() ? tr("untitled plan") : plan_path_;
  setWindowTitle(tr("Plansight — %1%2").arg(name, hasUnsavedEdits() ? QStringLiteral(" *") : QString()));
}

bool MainWindow::hasUnsavedEdits() const { return est::to_json(document_->plan()).dump() != baseline_json_; }

bool MainWindow::confirmDiscard(const QString& action) {
  if (!hasUnsavedEdits()) return true;
  QMessageBox box(QMessageBox::Question, tr("Unsaved plan"),
                  tr("The plan has edits that are not saved to a file. Save them before %1?").arg(action),
                  QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
  box.setObjectName(QStringLiteral("confirmDiscard"));
  box.setDefaultButton(QMessageBox::Save);
  switch (box.exec()) {
    case QMessageBox::Save:
      onSave(false);
      return !hasUnsavedEdits();  // the save dialog was cancelled or failed: stay
    case QMessageBox::Discard: return true;
    default: return false;
  }
}

void MainWindow::setRunDatabase(const QString& path) {
  runs_->setDatabasePath(path);
  settings_->setValue(QString::fromLatin1(kRunDatabaseKey), path);
  statusBar()->showMessage(tr("Run database: %1").arg(path), 8000);
}

void MainWindow::newPlan() {
  if (!confirmDiscard(tr("starting a new plan"))) return;
  plan_path_.clear();
  document_->replacePlan(est::default_plan());
  baseline_json_ = est::to_json(document_->plan()).dump();
  updateTitle();
}

}  // namespace plansight::gui
