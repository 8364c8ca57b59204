// The Sweep page: pick a plan field and its values (as `plansight sweep` takes them: 4..32*2,
// 0..3, 1,2,4) and one or more metrics; the current plan is swept off the GUI thread and drawn
// as line charts (sweep_chart.h), exportable as PNG/SVG with the plan in the title, and as CSV.
#pragma once

#include <QWidget>

#include <cstdint>
#include <optional>

#include "plansight/estimator/sweep.h"
#include "plansight/gui/job_runner.h"
#include "plansight/gui/chart_export.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace plansight::gui {

class PlanDocument;
class SweepChart;

class SweepPage : public QWidget, public ExportablePage {
  Q_OBJECT

 public:
  explicit SweepPage(PlanDocument* document, QWidget* parent = nullptr);
  ~SweepPage() override;

  // Sets the form (tests, and the CLI's spelling): field, values, metrics.
  void setSweep(const QString& field, const QString& values, const QStringList& metrics);
  // Starts a sweep of the current plan; false (with the reason in status()) when the form is invalid.
  bool startSweep();
  bool isRunning() const { return running_; }
  const std::optional<estimator::SweepResult>& result() const { return result_; }
  QString status() const;
  SweepChart* chart() const { return chart_; }
  QString exportCsv(const QString& path) const;  // an error message, empty on success

  QString exportTitle() const override;
  QSize exportSize() const override;
  void renderExport(QPainter& painter, const QSize& size) const override;

 signals:
  void sweepFinished();

 private:
  QString planDescription() const;

  PlanDocument* document_;
  QComboBox* field_;
  QLineEdit* values_;
  QListWidget* metrics_;
  QPushButton* run_;
  QPushButton* csv_;
  QLabel* status_;
  SweepChart* chart_;
  bool running_ = false;
  std::optional<estimator::SweepResult> result_;
  QString swept_plan_;  // the description of the plan the result belongs to
  JobRunner jobs_;      // last member: destroyed first, so no job outlives what it touches
};

}  // namespace plansight::gui
