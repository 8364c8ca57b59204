// The Plans page: two plans side by side — a pinned plan A (the current plan when "Pin" was
// pressed, or a plan file) and the plan being edited, B. The fields that differ, memory per GPU
// by component, the iteration's time breakdown and the training totals with B - A and B / A
// (estimator/plan_diff.h), and both predicted timelines on one time axis. B follows every edit,
// so a lecturer pins a plan, changes ZeRO or the micro-batches, and the deltas are there.
#pragma once

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "plansight/estimator/plan_diff.h"
#include "plansight/gui/plan_document.h"

class QLabel;
class QPushButton;

namespace plansight::gui {

class SharedTimeAxis;
class TimelineWidget;

class PlanDiffModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { name, a, b, delta, ratio, column_count };
  using QAbstractTableModel::QAbstractTableModel;

  // Changed fields first (their old and new values under A and B), then the quantities.
  void setDiff(std::vector<estimator::PlanFieldChange> changes, std::vector<estimator::PlanQuantity> quantities);
  int changeCount() const { return static_cast<int>(changes_.size()); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<estimator::PlanFieldChange> changes_;
  std::vector<estimator::PlanQuantity> quantities_;  // available ones only
};

class PlansPage : public QWidget {
  Q_OBJECT

 public:
  explicit PlansPage(PlanDocument* document, QWidget* parent = nullptr);

  // Pins the current plan (with its estimate and timeline) as A.
  void pinCurrentPlan();
  // Pins a plan file as A; returns an error message, empty on success.
  QString pinPlanFile(const QString& path);
  bool hasPinned() const { return pinned_.has_value(); }
  PlanDiffModel* model() { return &model_; }
  TimelineWidget* pinnedTimeline() const { return pinned_view_; }
  TimelineWidget* currentTimeline() const { return current_view_; }
  QString status() const;

 private:
  struct Pinned {
    estimator::Plan plan;
    std::shared_ptr<const EstimateOutcome> estimate;
    std::shared_ptr<const TimelineOutcome> timeline;
    QString label;
  };
  void refresh();
  QString describe(const estimator::Plan& plan) const;

  PlanDocument* document_;
  std::optional<Pinned> pinned_;
  PlanDiffModel model_;
  QLabel* status_;
  TimelineWidget* pinned_view_;
  TimelineWidget* current_view_;
  SharedTimeAxis* axis_;
};

}  // namespace plansight::gui
