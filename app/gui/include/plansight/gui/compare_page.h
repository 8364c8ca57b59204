// The Compare page: a run from the store (through the Runs page's RunRepository) beside a
// prediction, the predicted and measured timelines one above the other on one time axis (two
// TimelineWidgets on a SharedTimeAxis), time per phase and memory per category predicted vs
// measured with the error; for a probe run against its own configuration also the device and
// precision it ran in, tokens/s and MFU, and on a GPU the tensor-core share of kernel time per
// step, phase and kernel class. Two predictions to set a run against:
// - a probe run's own configuration, predicted with the run's hardware profile (`plansight
//   compare RUN`);
// - the plan being edited, for any measured or imported run (`plansight compare RUN --plan`);
//   it follows the plan's edits.
// Without such a run in the store it says how to make one.
#pragma once

#include <QWidget>
#include <cstdint>
#include <memory>
#include <optional>

#include "plansight/gui/job_runner.h"
#include "plansight/gui/run_comparison.h"

class QComboBox;
class QPushButton;
class QLabel;
class QStackedWidget;
class QTableView;

namespace plansight::gui {

class ComparisonModel;
class FigureModel;
class PlanDocument;
class RunRepository;
class SharedTimeAxis;
class TimelineWidget;

class ComparePage : public QWidget {
  Q_OBJECT

 public:
  enum class Against { own_configuration, current_plan };

  ComparePage(RunRepository* runs, PlanDocument* document, QWidget* parent = nullptr);
  ~ComparePage() override;  // waits for a running comparison (its result is dropped)

  // Picks the run (after a refresh when it is not listed yet) and compares it, against the
  // given prediction when the run allows it; comparisonReady follows.
  void selectRun(std::int64_t run_id, std::optional<Against> against = std::nullopt);
  void setAgainst(Against against);
  Against against() const;
  std::shared_ptr<const RunComparison> comparison() const { return comparison_; }
  QComboBox* runPicker() const { return picker_; }
  QComboBox* againstPicker() const { return against_; }
  ComparisonModel* phaseModel() const { return phases_; }
  ComparisonModel* memoryModel() const { return memory_; }
  ComparisonModel* operatorModel() const { return operators_; }
  FigureModel* throughputModel() const { return throughput_; }
  FigureModel* tensorCoreModel() const { return tensor_cores_; }
  TimelineWidget* predictedView() const { return predicted_view_; }
  TimelineWidget* measuredView() const { return measured_view_; }
  SharedTimeAxis* sharedAxis() const { return axis_; }
  QString titleText() const;
  // The predicted timeline layer by layer, each collective its own span (the button "Per layer").
  void setPerLayer(bool on);
  bool perLayer() const;
  bool showsEmptyHint() const;  // no run to compare in the store

 signals:
  void comparisonReady();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void runsChanged();
  void compareCurrent();
  void planChanged();
  void updateAgainstChoices();
  void deliver(std::shared_ptr<const RunComparison> comparison);
  void showPredicted();  // the comparison's predicted timeline, per layer or not
  void showFigures(const RunComparison& c);  // device, throughput and tensor cores; empty ones hidden

  RunRepository* runs_;
  PlanDocument* document_;
  QStackedWidget* stack_;
  QLabel* empty_;
  QComboBox* picker_;
  QComboBox* against_;
  QPushButton* per_layer_;
  QLabel* title_;
  QLabel* note_;
  QLabel* warning_;  // the run and the plan describe different jobs
  TimelineWidget* predicted_view_;
  TimelineWidget* measured_view_;
  SharedTimeAxis* axis_;
  ComparisonModel* phases_;
  ComparisonModel* memory_;
  QWidget* memory_box_;
  ComparisonModel* operators_;
  QLabel* operators_note_;
  QWidget* operators_box_;  // hidden where the run's spans are not the probe's operators
  FigureModel* throughput_;
  FigureModel* tensor_cores_;
  QLabel* device_;             // "NVIDIA H200 · bf16"
  QLabel* throughput_note_;    // the MFU's peak, or why there is no MFU
  QLabel* tensor_core_note_;
  QTableView* throughput_table_;
  QTableView* phase_table_ = nullptr;   // at least as high as its rows (show_every_row)
  QWidget* throughput_box_;
  QWidget* tensor_core_box_;   // hidden on a CPU run and against a plan
  std::shared_ptr<const RunComparison> comparison_;
  bool refreshed_ = false;
  bool stale_ = false;  // the plan changed while the page was hidden
  JobRunner jobs_;      // last member: destroyed first, so no job outlives what it touches
};

}  // namespace plansight::gui
