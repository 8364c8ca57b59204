// The Probe page: configure a small probe run (model, layout, steps, device, calibration),
// Start and Cancel it, follow its progress (step i of N, loss, time left), then see what it
// measured: the measured step in the timeline view, loss and time per step, memory per
// category. The run itself is ProbeRunner's child process; a crash, a non-zero exit or the
// probe's own error becomes the page's message. A stored run appears on the Runs page.
#pragma once

#include <QWidget>
#include <cstdint>

#include "plansight/gui/probe_runner.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace plansight::gui {

class ProbeMemoryModel;
class ProbeStepModel;
class RunRepository;
class SweepChart;
class TimelineWidget;

class ProbePage : public QWidget {
  Q_OBJECT

 public:
  explicit ProbePage(RunRepository* runs, QWidget* parent = nullptr);

  ProbeSettings settings() const;
  void setSettings(const ProbeSettings& settings);
  void startRun();   // with the form's settings
  void cancelRun();  // SIGINT; a second one kills

  ProbeRunner* runner() const { return runner_; }
  ProbeStepModel* stepModel() const { return steps_; }
  ProbeMemoryModel* memoryModel() const { return memory_; }
  TimelineWidget* timeline() const { return view_; }
  QString message() const;
  QString progressText() const;

 signals:
  void runStored(qint64 run_id);          // a run (finished, stopped or failed) is in the store
  void compareRequested(qint64 run_id);   // "Compare with prediction"
  void statusMessage(const QString& text);

 private:
  QWidget* buildForm();
  void onStateChanged();
  void onProgress(qint64 step, qint64 steps, double loss, double elapsed_s, double eta_s);
  void onFinished();
  void setMessage(const QString& text, bool error);

  RunRepository* runs_;
  ProbeRunner* runner_;
  ProbeStepModel* steps_;
  ProbeMemoryModel* memory_;
  QComboBox* model_;
  QSpinBox* tp_;
  QSpinBox* pp_;
  QSpinBox* vpp_;
  QSpinBox* dp_;
  QComboBox* zero_;
  QComboBox* recompute_;
  QComboBox* schedule_;
  QSpinBox* steps_count_;
  QDoubleSpinBox* learning_rate_;
  QSpinBox* lr_warmup_;
  QComboBox* data_;
  QComboBox* device_;
  QComboBox* precision_;
  QComboBox* calibration_;
  QLineEdit* name_;
  QLineEdit* launcher_;
  QPushButton* start_;
  QPushButton* cancel_;
  QPushButton* compare_;
  QProgressBar* bar_;
  QLabel* progress_;
  QLabel* message_;
  QLabel* summary_;
  SweepChart* curves_;  // loss and step time per step, live
  double last_elapsed_s_ = 0;
  TimelineWidget* view_;
  QWidget* form_;
};

}  // namespace plansight::gui
