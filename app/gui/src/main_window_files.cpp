// Main window file operations: plan JSON open/save, page export, screenshots (see main_window.h).
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTableView>
#include <QTabWidget>
#include <QTimer>

#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/chart_export.h"
#include "plansight/gui/compare_page.h"
#include "plansight/gui/main_window.h"
#include "plansight/gui/memory_page.h"
#include "plansight/gui/operators_page.h"
#include "plansight/gui/placement_page.h"
#include "plansight/gui/plan_caption.h"
#include "plansight/gui/plans_page.h"
#include "plansight/gui/sweep_page.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/probe_page.h"
#include "plansight/gui/probe_runner.h"
#include "plansight/gui/run_list_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/runs_page.h"
#include "plansight/gui/search_page.h"
#include "plansight/gui/timeline_page.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

namespace est = plansight::estimator;

QString MainWindow::openPlan(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return tr("Cannot read %1: %2").arg(path, file.errorString());
  const QByteArray text = file.readAll();
  std::vector<Diagnostic> adjustments;
  auto plan = est::parse_plan(std::string_view(text.constData(), static_cast<std::size_t>(text.size())), &adjustments);
  if (!plan) return tr("%1 is not a valid plan:\n%2").arg(path, QString::fromStdString(plan.error_text()));
  plan_path_ = path;
  document_->replacePlan(*plan);
  baseline_json_ = est::to_json(document_->plan()).dump();
  updateTitle();
  // Fields the file did not give but the reader changed (a replaced model's layout): said, and
  // kept in the status bar until the next message, so nothing changes unseen.
  QStringList notes;
  for (const auto& a : adjustments) notes << QString::fromStdString(a.field + ": " + a.message);
  statusBar()->showMessage(notes.isEmpty() ? tr("Opened %1").arg(path)
                                           : tr("Opened %1; changed for you: %2").arg(path, notes.join(QStringLiteral("; "))));
  return {};
}

QString MainWindow::savePlan(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return tr("Cannot write %1: %2").arg(path, file.errorString());
  const std::string text = est::to_json(document_->plan()).dump(2) + "\n";
  if (file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())) {
    return tr("Cannot write %1: %2").arg(path, file.errorString());
  }
  plan_path_ = path;
  baseline_json_ = est::to_json(document_->plan()).dump();
  updateTitle();
  return {};
}

QString MainWindow::exportCurrentPage(const QString& path) {
  // The Plan page (no ExportablePage of its own): the form as it is on screen.
  struct FormPage : ExportablePage {
    QWidget* w;
    QString exportTitle() const override { return QStringLiteral("plan"); }
    QSize exportSize() const override { return w->size(); }
    void renderExport(QPainter& p, const QSize&) const override { render_widget(*w, p); }
  } form;
  form.w = tabs_->currentWidget();
  const auto* own = dynamic_cast<ExportablePage*>(tabs_->currentWidget());
  const ExportablePage& page = own ? *own : form;
  // Every export carries the page's name and the plan it shows (the window title names the file).
  const QString title = tabs_->tabText(tabs_->currentIndex()).remove(QRegularExpression(QStringLiteral("&(?!&)")));
  const CaptionedPage captioned(page, tr("Plansight — %1").arg(title), plan_caption(document_->plan()));
  return path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive) ? export_svg(captioned, path) : export_png(captioned, path);
}

QString MainWindow::saveScreenshots(const QString& dir) {
  if (!QDir().mkpath(dir)) return tr("Cannot create %1").arg(dir);
  if (!document_->isIdle()) {
    QEventLoop loop;  // screenshot mode only: waits for the worker without freezing the window
    connect(document_, &PlanDocument::idle, &loop, &QEventLoop::quit);
    QTimer::singleShot(60000, &loop, &QEventLoop::quit);
    loop.exec();
  }
  const auto shoot = [&](const QString& name) -> QString {
    QCoreApplication::processEvents();
    const QString path = QDir(dir).filePath(name + QStringLiteral(".png"));
    return grab().save(path, "PNG") ? QString() : tr("Cannot write %1").arg(path);
  };
  const QStringList names = {QStringLiteral("1-plan"), QStringLiteral("2-memory"), QStringLiteral("3-time-cost"),
                             QStringLiteral("4-timeline")};
  for (int i = 0; i < tabs_->count() && i < names.size(); ++i) {
    tabs_->setCurrentIndex(i);
    if (QString error = shoot(names[i]); !error.isEmpty()) return error;
  }
  // The timeline zoomed into the steady state, and halfway through a step-through.
  TimelineWidget* view = timeline_page_->timeline();
  view->zoomBy(30.0, view->plotWidth() * 0.45);
  if (QString error = shoot(QStringLiteral("5-timeline-zoomed")); !error.isEmpty()) return error;
  // Per layer, zoomed onto a few ops of the steady state: each layer's blocks and collectives.
  view->fitAll();
  timeline_page_->setPerLayer(true);
  view = timeline_page_->timeline();
  view->zoomBy(150.0, view->plotWidth() * 0.45);
  if (QString error = shoot(QStringLiteral("16-timeline-per-layer")); !error.isEmpty()) return error;
  timeline_page_->setPerLayer(false);
  view->fitAll();
  timeline_page_->setStepMode(true);
  timeline_page_->setStep(timeline_page_->stepThrough().size() * 2 / 5);
  if (QString error = shoot(QStringLiteral("6-timeline-step-through")); !error.isEmpty()) return error;
  timeline_page_->setStepMode(false);
  const auto wait_for = [](auto* sender, auto signal, int timeout_ms) {
    QEventLoop loop;
    connect(sender, signal, &loop, &QEventLoop::quit);
    QTimer::singleShot(timeout_ms, &loop, &QEventLoop::quit);
    loop.exec();
  };
  const auto wait_runs = [this, &wait_for] {
    if (!runs_->isIdle()) wait_for(runs_, &RunRepository::idle, 30000);
  };
  // A real probe run first (the default small model, TP 2 x PP 2 on this machine's CPU), so that
  // the Runs, Probe and Compare pages show measured data; a probe that cannot run shows its message.
  tabs_->setCurrentWidget(probe_page_);
  ProbeSettings probe;
  probe.tp = 2;
  probe.pp = 2;
  probe.steps = 8;
  probe_page_->setSettings(probe);
  probe_page_->startRun();
  if (probe_page_->runner()->isRunning()) wait_for(probe_page_->runner(), &ProbeRunner::finished, 180000);
  runs_->refresh();
  wait_runs();
  // The Runs page, with its newest run (the probe's) selected and its timeline loaded.
  tabs_->setCurrentWidget(runs_page_);
  wait_runs();
  if (runs_page_->model()->rowCount() > 0) {
    runs_page_->selectRun(0);
    wait_runs();
  }
  if (QString error = shoot(QStringLiteral("7-runs")); !error.isEmpty()) return error;
  // The Search page after a search of the current plan.
  tabs_->setCurrentWidget(search_page_);
  search_page_->startSearch();
  if (search_page_->isRunning()) wait_for(search_page_, &SearchPage::searchFinished, 120000);
  if (QString error = shoot(QStringLiteral("8-search")); !error.isEmpty()) return error;
  tabs_->setCurrentWidget(probe_page_);
  if (QString error = shoot(QStringLiteral("9-probe")); !error.isEmpty()) return error;
  // The Compare page on the probe run against its own configuration (or how to make a run).
  tabs_->setCurrentWidget(compare_page_);
  wait_runs();
  if (const std::int64_t id = probe_page_->runner()->outcome().run_id; id > 0) {
    compare_page_->selectRun(id, ComparePage::Against::own_configuration);
    wait_for(compare_page_, &ComparePage::comparisonReady, 60000);
  } else if (compare_page_->runPicker()->count() > 0 && !compare_page_->comparison()) {
    wait_for(compare_page_, &ComparePage::comparisonReady, 60000);
  }
  if (QString error = shoot(QStringLiteral("10-compare")); !error.isEmpty()) return error;
  // The same comparison with the prediction laid out per layer, zoomed onto the first stage's
  // first forward: the predicted layers' blocks and all-reduces above the measured kernels.
  compare_page_->setPerLayer(true);
  compare_page_->predictedView()->zoomBy(6.0, 0);
  if (QString error = shoot(QStringLiteral("17-compare-per-layer")); !error.isEmpty()) return error;
  compare_page_->setPerLayer(false);
  // An example from the Examples menu, on the Memory page: ZeRO-1 for a 7.5B model on 64 GPUs,
  // the panel with the paper's values below.
  if (openExample(QStringLiteral("zero-stages-7.5b"), 1).isEmpty()) {
    if (!document_->isIdle()) wait_for(document_, &PlanDocument::idle, 60000);
    tabs_->setCurrentWidget(memory_page_);
    if (QString error = shoot(QStringLiteral("11-example")); !error.isEmpty()) return error;
    // The Sweep page on that plan: ZeRO stages 0-3, model states and memory per GPU.
    tabs_->setCurrentWidget(sweep_page_);
    sweep_page_->setSweep(QStringLiteral("zero"), QStringLiteral("0..3"),
                          {QStringLiteral("model_states_gb"), QStringLiteral("memory_gib")});
    if (sweep_page_->startSweep()) wait_for(sweep_page_, &SweepPage::sweepFinished, 60000);
    if (QString error = shoot(QStringLiteral("12-sweep")); !error.isEmpty()) return error;
    // The Plans page: that plan pinned as A, the edited plan at ZeRO-3 with 4 micro-batches.
    plans_page_->pinCurrentPlan();
    est::Plan edited = document_->plan();
    edited.layout.zero_stage = 3;
    document_->editPlan(edited);
    if (!document_->isIdle()) wait_for(document_, &PlanDocument::idle, 60000);
    tabs_->setCurrentWidget(plans_page_);
    if (QString error = shoot(QStringLiteral("13-plans")); !error.isEmpty()) return error;
    // That ZeRO-3 plan with TP 2, per layer, zoomed onto its first layers' forward: between the
    // TP all-reduces, compute hides each layer's parameter gather, drawn on the rank's "hidden
    // comm" row under the layers.
    edited.layout.tp = 2;
    document_->editPlan(edited);
    if (!document_->isIdle()) wait_for(document_, &PlanDocument::idle, 60000);
    tabs_->setCurrentWidget(timeline_page_);
    timeline_page_->setPerLayer(true);
    TimelineWidget* hidden = timeline_page_->timeline();
    hidden->fitAll();
    hidden->zoomBy(40.0, 0);
    if (QString error = shoot(QStringLiteral("18-timeline-hidden-comm")); !error.isEmpty()) return error;
    timeline_page_->setPerLayer(false);
  }
  // The Placement page for TP 4 x PP 2 x DP 4 on 32 GPUs, rank 13 hovered (its groups outlined).
  est::Plan placed = est::default_plan();
  placed.cluster.gpus = 32;
  placed.layout.tp = 4;
  placed.layout.pp = 2;
  placed.training.global_batch = 64;
  document_->replacePlan(placed);
  if (!document_->isIdle()) wait_for(document_, &PlanDocument::idle, 60000);
  example_dock_->hide();
  tabs_->setCurrentWidget(placement_page_);
  placement_page_->map()->setHovered(13);
  if (QString error = shoot(QStringLiteral("14-placement")); !error.isEmpty()) return error;
  // The Operators page on the default plan, the QKV GEMM's forward row selected (its point ringed).
  document_->replacePlan(est::default_plan());
  if (!document_->isIdle()) wait_for(document_, &PlanDocument::idle, 60000);
  tabs_->setCurrentWidget(operators_page_);
  statusBar()->clearMessage();  // the example's message is not about this plan
  operators_page_->table()->selectRow(1);
  if (QString error = shoot(QStringLiteral("15-operators")); !error.isEmpty()) return error;
  tabs_->setCurrentIndex(0);
  return {};
}

void MainWindow::onOpen() {
  if (!confirmDiscard(tr("opening another plan"))) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Open plan"), QFileInfo(plan_path_).path(),
                                                    tr("Plan JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  if (const QString error = openPlan(path); !error.isEmpty()) QMessageBox::warning(this, tr("Open plan"), error);
}

void MainWindow::onSave(bool ask) {
  QString path = plan_path_;
  if (ask || path.isEmpty()) {
    path = QFileDialog::getSaveFileName(this, tr("Save plan"), path.isEmpty() ? QStringLiteral("plan.json") : path,
                                        tr("Plan JSON (*.json)"));
  }
  if (path.isEmpty()) return;
  if (const QString error = savePlan(path); !error.isEmpty()) {
    QMessageBox::warning(this, tr("Save plan"), error);
  } else {
    statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  }
}

void MainWindow::onExport(const QString& suffix) {
  const auto* page = dynamic_cast<ExportablePage*>(tabs_->currentWidget());
  const QString name = (page ? page->exportTitle() : QStringLiteral("plan")) + QLatin1Char('.') + suffix;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export page"), name, suffix == QStringLiteral("svg") ? tr("SVG (*.svg)") : tr("PNG (*.png)"));
  if (path.isEmpty()) return;
  if (const QString error = exportCurrentPage(path); !error.isEmpty()) {
    QMessageBox::warning(this, tr("Export"), error);
  } else {
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
  }
}

}  // namespace plansight::gui
