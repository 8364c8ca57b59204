// The Compare page: a probe run from the store (through the Runs page's RunRepository), its
// predicted and measured steps one above the other on one time axis (two TimelineWidgets on a
// SharedTimeAxis), time per phase and memory per category predicted vs measured with the error,
// as `plansight compare RUN` computes them. Without a probe run it says how to make one.
#pragma once

#include <QThreadPool>
#include <QWidget>
#include <cstdint>
#include <memory>

#include "plansight/gui/probe_comparison.h"

class QComboBox;
class QLabel;
class QStackedWidget;
class QTableView;

namespace plansight::gui {

class ComparisonModel;
class RunRepository;
class SharedTimeAxis;
class TimelineWidget;

class ComparePage : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePage(RunRepository* runs, QWidget* parent = nullptr);
  ~ComparePage() override;  // waits for a running comparison (its result is dropped)

  // Compares the run (computed on a worker); comparisonReady follows.
  void compareRun(std::int64_t run_id);
  std::shared_ptr<const ProbeComparison> comparison() const { return comparison_; }
  QComboBox* runPicker() const { return picker_; }
  ComparisonModel* phaseModel() const { return phases_; }
  ComparisonModel* memoryModel() const { return memory_; }
  TimelineWidget* predictedView() const { return predicted_view_; }
  TimelineWidget* measuredView() const { return measured_view_; }
  SharedTimeAxis* sharedAxis() const { return axis_; }
  bool showsEmptyHint() const;  // no probe run in the store

 signals:
  void comparisonReady();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void runsChanged();
  void deliver(std::uint64_t generation, std::shared_ptr<const ProbeComparison> comparison);

  RunRepository* runs_;
  QStackedWidget* stack_;
  QLabel* empty_;
  QComboBox* picker_;
  QLabel* title_;
  QLabel* note_;
  TimelineWidget* predicted_view_;
  TimelineWidget* measured_view_;
  SharedTimeAxis* axis_;
  ComparisonModel* phases_;
  ComparisonModel* memory_;
  std::shared_ptr<const ProbeComparison> comparison_;
  std::uint64_t generation_ = 0;
  bool refreshed_ = false;
  QThreadPool pool_;
};

}  // namespace plansight::gui
